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
}

// Project groups tasks; its members may see and change them.
type Project struct {
	ID          string
	Name        string
	Description *string
	OwnerID     string
	CreatedAt   time.Time
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
}

// Comment is a member's remark on a task.
type Comment struct {
	ID        string
	TaskID    string
	AuthorID  string
	Body      string
	CreatedAt time.Time
}

// Tag is a label on tasks; tasks of a tag are listed per viewer.
type Tag struct {
	Name string
}

// TagList returns the task's tags as Tags (the GraphQL field Task.tags: a
// method, not a resolver, as it needs no read).
func (t *Task) TagList() []*Tag {
	out := make([]*Tag, len(t.Tags))
	for i, n := range t.Tags {
		out[i] = &Tag{Name: n}
	}
	return out
}

// Page asks for one page of a list: at most First items after the cursor.
type Page struct {
	First int
	After *string
}

// Conn is one page of a list, with a cursor per item.
type Conn[T any] struct {
	Items   []T
	Cursors []string
	HasNext bool
}

// EndCursor is the cursor of the page's last item, nil for an empty page.
func (c *Conn[T]) EndCursor() *string {
	if len(c.Cursors) == 0 {
		return nil
	}
	return &c.Cursors[len(c.Cursors)-1]
}
