package domain

import (
	"time"
)

// User is a person, identified by their token's sub.
type User struct {
	ID        string
	Name      string
	Email     *string
	CreatedAt time.Time
	// Rev counts the writes of the profile (updateProfile): a sync tells
	// by it that the viewer's own profile changed.
	Rev int
	// Projects are the projects the user is a member of, id → name: a
	// copy on the profile's item, written in the transactions that change
	// memberships, rename and delete projects (dynamo/copies.go), so that
	// whether a viewer may see a project is one read of their profile.
	Projects map[string]string
}

// Project groups tasks; its members may see and change them.
type Project struct {
	ID          string
	Name        string
	Description *string
	OwnerID     string
	CreatedAt   time.Time
	// TaskCounts is how many of the project's tasks are in each status:
	// counters on the project's item, kept by the transactions that
	// create, delete and change the status of its tasks (dynamo/counts.go).
	TaskCounts TaskCounts
	// Seq is the position of the project's last change in its change log
	// (dynamo/changes.go), ProjectSeq that of the last change of the
	// project itself (its fields, its task counts, its members): a sync
	// reads from them what changed since a position.
	Seq, ProjectSeq int64
	// SeqAt is when the change at Seq was made (zero: before it was kept):
	// an HTTP ETag stands on a seq only once its change has settled
	// (graph/etag).
	SeqAt time.Time
}

// TaskCounts is how many of a project's tasks are in each status.
type TaskCounts struct {
	Todo       int
	InProgress int
	Done       int
}

// Total is how many tasks the project has.
func (c TaskCounts) Total() int { return c.Todo + c.InProgress + c.Done }

// Add adds d to the count of status st (a status that is none of the
// three counts as TODO).
func (c *TaskCounts) Add(st TaskStatus, d int) {
	switch st {
	case StatusInProgress:
		c.InProgress += d
	case StatusDone:
		c.Done += d
	default:
		c.Todo += d
	}
}

// Role is a member's role in a project.
type Role string

// The roles a member may have.
const (
	RoleOwner  Role = "OWNER"
	RoleMember Role = "MEMBER"
)

// Member is a user's membership of a project.
type Member struct {
	ProjectID string
	UserID    string
	Role      Role
	// JoinedAt is when this membership began: written in the transaction
	// that makes it, with the very clock value of that transaction's
	// event (the MEMBER_ADDED's At; the project's CreatedAt for its
	// owner). A member removed and added back has the re-adding's time.
	// The live replay starts a viewer's history there.
	JoinedAt time.Time
}

// TaskStatus is where a task stands.
type TaskStatus string

// The statuses of a task.
const (
	StatusTodo       TaskStatus = "TODO"
	StatusInProgress TaskStatus = "IN_PROGRESS"
	StatusDone       TaskStatus = "DONE"
)

// Valid reports whether s is one of the statuses.
func (s TaskStatus) Valid() bool {
	return s == StatusTodo || s == StatusInProgress || s == StatusDone
}

// Task is a unit of work in a project.
type Task struct {
	ID          string
	ProjectID   string
	Title       string
	Description *string
	Status      TaskStatus
	DueDate     *Date
	AssigneeID  *string
	Tags        []string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Version     int
	// CommentCount is how many comments the task has: a counter on the
	// task's item, kept by the transactions that add and delete them.
	CommentCount int
}

// Comment is a member's remark on a task.
type Comment struct {
	ID        string
	TaskID    string
	AuthorID  string
	Body      string
	CreatedAt time.Time
}

// Tag is a label on tasks; tasks of a tag are listed per viewer. A tag is
// its name: every well-formed name is one, with the same id for everyone.
type Tag struct {
	Name string
}

// ID returns the tag's global id (TagIDOf), made from its name without a
// read.
func (t *Tag) ID() string { return TagIDOf(t.Name) }

// TagList returns the task's tags as Tags (the GraphQL field Task.tags: a
// method, not a resolver, as it needs no read).
func (t *Task) TagList() []*Tag {
	out := make([]*Tag, len(t.Tags))
	tags := make([]Tag, len(t.Tags)) // one allocation for all
	for i, n := range t.Tags {
		tags[i].Name = n
		out[i] = &tags[i]
	}
	return out
}

// Page asks for one page of a list, in Relay's terms: the first First
// items, or with Last set the last *Last items, of those between the
// cursors After and Before (each optional, both exclusive). Either cursor
// bounds either direction. A page keeps the list's order whichever end it
// is read from; First and Last together are EINVALID.
type Page struct {
	First  int
	After  *string
	Last   *int
	Before *string
}

// Conn is one page of a list, with a cursor per item. HasNext is known on
// a forward page (First), HasPrev on a backward one (Last); the other is
// false: knowing it would take another read.
type Conn[T any] struct {
	Items   []T
	Cursors []string
	HasNext bool
	HasPrev bool
}

// ConnOf returns the page c with other items, one for each of c's, under
// the same cursors.
func ConnOf[U, T any](c *Conn[T], items []U) *Conn[U] {
	return &Conn[U]{Items: items, Cursors: c.Cursors, HasNext: c.HasNext, HasPrev: c.HasPrev}
}

// StartCursor is the cursor of the page's first item, nil for an empty page.
func (c *Conn[T]) StartCursor() *string {
	if len(c.Cursors) == 0 {
		return nil
	}
	return &c.Cursors[0]
}

// EndCursor is the cursor of the page's last item, nil for an empty page.
func (c *Conn[T]) EndCursor() *string {
	if len(c.Cursors) == 0 {
		return nil
	}
	return &c.Cursors[len(c.Cursors)-1]
}
