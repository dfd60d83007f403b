package dynamo

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

type item = map[string]types.AttributeValue

// Item types, stored in the "type" attribute of every item.
const (
	typeUser    = "USER"
	typeProject = "PROJECT"
	typeMember  = "MEMBER"
	typeTask    = "TASK"
	typeTag     = "TAG"
	typeComment = "COMMENT"
	typeCleanup = "CLEANUP"
	typeOutbox  = "OUTBOX"
	typeMarker  = "MARKER"
	typeChange  = "CHANGE"
	typeLeft    = "LEFT"
)

const timeLayout = time.RFC3339Nano

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// fmtTimeOrNone is fmtTime, "" (no attribute) for the zero time.
func fmtTimeOrNone(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return fmtTime(t)
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeLayout, s)
	return t.UTC()
}

type userItem struct {
	PK        string
	SK        string
	Type      string  `dynamodbav:"type"`
	ID        string  `dynamodbav:"id"`
	Name      string  `dynamodbav:"name"`
	Email     *string `dynamodbav:"email,omitempty"`
	CreatedAt string  `dynamodbav:"createdAt"`
	Rev       int     `dynamodbav:"rev"` // grows with each write, for optimistic locking
	// Projects: the user's projects, ULID → name (copies.go); never nil, so
	// that a membership's change can set one path of the map.
	Projects map[string]string `dynamodbav:"projects"`
}

type projectItem struct {
	PK          string
	SK          string
	Type        string  `dynamodbav:"type"`
	ID          string  `dynamodbav:"id"`
	Name        string  `dynamodbav:"name"`
	Description *string `dynamodbav:"description,omitempty"`
	OwnerID     string  `dynamodbav:"ownerId"`
	CreatedAt   string  `dynamodbav:"createdAt"`
	Rev         int     `dynamodbav:"rev"` // grows with each write, for optimistic locking
	// The counters of the project's tasks by status (counts.go).
	TodoCount       int `dynamodbav:"todoCount"`
	InProgressCount int `dynamodbav:"inProgressCount"`
	DoneCount       int `dynamodbav:"doneCount"`
	// Seq is the position of the project's last change in its change log,
	// ProjectSeq that of the project's own last change (changes.go).
	Seq        int64 `dynamodbav:"seq"`
	ProjectSeq int64 `dynamodbav:"projectSeq"`
	// SeqAt is when the change at Seq was made (changes.go, finish).
	SeqAt string `dynamodbav:"seqAt,omitempty"`
}

type memberItem struct {
	PK       string
	SK       string
	GSI1PK   string
	GSI1SK   string
	Type     string `dynamodbav:"type"`
	Project  string `dynamodbav:"projectId"`
	User     string `dynamodbav:"userId"`
	Role     string `dynamodbav:"role"`
	JoinedAt string `dynamodbav:"joinedAt"`
	// AssignSeq grows whenever a task is assigned to this member, so that
	// removing the member can tell whether an assignment slipped in.
	AssignSeq int `dynamodbav:"assignSeq"`
	// SyncSeq is the position of the member's entry in the project's
	// change log, ProfileRev the profile rev that entry stands for
	// (changes.go). (A task's and a comment's item hold a syncSeq too.)
	SyncSeq    int64 `dynamodbav:"syncSeq,omitempty"`
	Born       int64 `dynamodbav:"born,omitempty"`
	ProfileRev int   `dynamodbav:"profileRev,omitempty"`
}

type taskItem struct {
	PK     string
	SK     string
	GSI1PK string
	GSI1SK string
	GSI2PK string
	GSI2SK string
	GSI4PK string
	Type   string `dynamodbav:"type"`
	taskFields
}

// taskFields are a task's own attributes, stored on its item and copied
// onto each of its tag links, so that a page of tagged tasks is read from
// the links alone (pattern 6). Every write of a task writes its links too,
// in the same transaction (taskWrites).
type taskFields struct {
	ID          string   `dynamodbav:"id"`
	Project     string   `dynamodbav:"projectId"`
	Title       string   `dynamodbav:"title"`
	Description *string  `dynamodbav:"description,omitempty"`
	Status      string   `dynamodbav:"status"`
	DueDate     string   `dynamodbav:"dueDate,omitempty"`
	Assignee    string   `dynamodbav:"assigneeId,omitempty"`
	Tags        []string `dynamodbav:"tags,omitempty"`
	CreatedAt   string   `dynamodbav:"createdAt"`
	UpdatedAt   string   `dynamodbav:"updatedAt"`
	Version     int      `dynamodbav:"version"`
	// CommentCount counts the task's comments (counts.go).
	CommentCount int `dynamodbav:"commentCount"`
}

// tagItem is the link of a task to one of its tags: its GSI1 entry lists
// the tag's tasks in the task's project by due date, with the ids a reader
// needs to read the task with its project and assignee at once (the tag
// indexes' entries carry the same; tagindex.go). A link written by an
// older version also carries a copy of the task's fields, which nothing
// reads.
type tagItem struct {
	PK       string
	SK       string
	GSI1PK   string
	GSI1SK   string
	Type     string `dynamodbav:"type"`
	Task     string `dynamodbav:"taskId"`
	Project  string `dynamodbav:"projectId"`
	Assignee string `dynamodbav:"assigneeId,omitempty"`
}

type commentItem struct {
	PK        string
	SK        string
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	Task      string `dynamodbav:"taskId"`
	Author    string `dynamodbav:"authorId"`
	Body      string `dynamodbav:"body"`
	CreatedAt string `dynamodbav:"createdAt"`
}

type cleanupItem struct {
	PK        string
	SK        string
	Type      string `dynamodbav:"type"`
	Kind      string `dynamodbav:"kind"`
	Target    string `dynamodbav:"target"` // a project or task ULID, or a user id
	CreatedAt string `dynamodbav:"createdAt"`
	// Project is a deleted task's project ULID; Rev a changed profile's rev
	// (changes.go).
	Project string `dynamodbav:"project,omitempty"`
	Rev     int    `dynamodbav:"rev,omitempty"`
}

// changeItem is one entry of a project's change log (changes.go): the
// object whose last change took its position, whether that change deleted
// it (or removed the member), when, and for a member when their
// membership began; a deleted task's entry holds its comments' ids. Once
// it may go (gone, or its project deleted), it has an expiry and the
// sweep's keys in GSI2.
type changeItem struct {
	PK       string
	SK       string
	GSI2PK   string   `dynamodbav:",omitempty"`
	GSI2SK   string   `dynamodbav:",omitempty"`
	Type     string   `dynamodbav:"type"`
	ID       string   `dynamodbav:"id"`
	Gone     bool     `dynamodbav:"gone,omitempty"`
	At       string   `dynamodbav:"at"`
	Since    string   `dynamodbav:"since,omitempty"`
	Comments []string `dynamodbav:"comments,omitempty"`
	// Born is the position of the object's first entry; CommentsBorn
	// that of each of Comments.
	Born         int64   `dynamodbav:"born"`
	CommentsBorn []int64 `dynamodbav:"commentsBorn,omitempty"`
	ExpiresAt    int64   `dynamodbav:"expiresAt,omitempty"`
}

// leftItem is a departure: when a user was last removed from a project,
// and by the change at which position (changes.go).
type leftItem struct {
	PK        string
	SK        string
	GSI2PK    string `dynamodbav:",omitempty"`
	GSI2SK    string `dynamodbav:",omitempty"`
	Type      string `dynamodbav:"type"`
	User      string `dynamodbav:"userId"`
	At        string `dynamodbav:"at"`
	Pos       int64  `dynamodbav:"pos"` // the position of the removal
	ExpiresAt int64  `dynamodbav:"expiresAt,omitempty"`
}

func marshal(v any) item {
	m, err := attributevalue.MarshalMap(v)
	if err != nil {
		panic(fmt.Sprintf("dynamo: marshal %T: %v", v, err)) // our own structs always marshal
	}
	return m
}

func ulidOf(id string) string { return id[strings.LastIndexByte(id, '#')+1:] }

func userToItem(u *domain.User, rev int) item {
	ps := make(map[string]string, len(u.Projects)+1)
	ps[keepCopy] = ""
	for id, name := range u.Projects {
		ps[ulidOf(id)] = name
	}
	return marshal(userItem{PK: userPK(u.ID), SK: profileSK, Type: typeUser, ID: u.ID, Name: u.Name,
		Email: u.Email, CreatedAt: fmtTime(u.CreatedAt), Rev: rev, Projects: ps})
}

func projectToItem(p *domain.Project, rev int) item {
	return marshal(projectItem{PK: projectPK(ulidOf(p.ID)), SK: projectSK, Type: typeProject, ID: p.ID,
		Name: p.Name, Description: p.Description, OwnerID: p.OwnerID, CreatedAt: fmtTime(p.CreatedAt), Rev: rev,
		TodoCount: p.TaskCounts.Todo, InProgressCount: p.TaskCounts.InProgress, DoneCount: p.TaskCounts.Done,
		Seq: p.Seq, ProjectSeq: p.ProjectSeq, SeqAt: fmtTimeOrNone(p.SeqAt)})
}

// revOf returns an item's rev attribute (0 when absent).
func revOf(m item) int {
	var r struct {
		Rev int `dynamodbav:"rev"`
	}
	_ = attributevalue.UnmarshalMap(m, &r)
	return r.Rev
}

func memberToItem(m *domain.Member) item {
	p := ulidOf(m.ProjectID)
	return marshal(memberItem{PK: projectPK(p), SK: memberSK(m.UserID), GSI1PK: userProjectsPK(m.UserID),
		GSI1SK: userProjectsSK(p), Type: typeMember, Project: m.ProjectID, User: m.UserID, Role: string(m.Role),
		JoinedAt: fmtTime(m.JoinedAt)})
}

func fieldsOf(t *domain.Task) taskFields {
	f := taskFields{ID: t.ID, Project: t.ProjectID, Title: t.Title, Description: t.Description, Status: string(t.Status),
		Tags: t.Tags, CreatedAt: fmtTime(t.CreatedAt), UpdatedAt: fmtTime(t.UpdatedAt), Version: t.Version,
		CommentCount: t.CommentCount}
	if len(f.Tags) == 0 {
		f.Tags = nil // the embedded store garbles empty lists: leave the attribute out
	}
	if t.DueDate != nil {
		f.DueDate = t.DueDate.String()
	}
	if t.AssigneeID != nil {
		f.Assignee = *t.AssigneeID
	}
	return f
}

func taskToItem(t *domain.Task) item {
	it := taskItem{PK: taskPK(ulidOf(t.ID)), SK: taskSK, GSI4PK: leanTasksPK(ulidOf(t.ProjectID)), Type: typeTask, taskFields: fieldsOf(t)}
	it.GSI1PK, it.GSI1SK, it.GSI2PK, it.GSI2SK = taskIndexKeys(t)
	return marshal(it)
}

func tagLinkItem(t *domain.Task, name string) item {
	tu := ulidOf(t.ID)
	it := tagItem{PK: taskPK(tu), SK: tagSK(name), GSI1PK: tagTasksPK(name, ulidOf(t.ProjectID)),
		GSI1SK: dueSK(t.DueDate, tu), Type: typeTag, Task: t.ID, Project: t.ProjectID}
	if t.AssigneeID != nil {
		it.Assignee = *t.AssigneeID
	}
	return marshal(it)
}

func commentToItem(c *domain.Comment) item {
	t, cu, _ := domain.SplitCommentID(c.ID)
	return marshal(commentItem{PK: taskPK(t), SK: commentSK(cu), Type: typeComment, ID: c.ID, Task: c.TaskID,
		Author: c.AuthorID, Body: c.Body, CreatedAt: fmtTime(c.CreatedAt)})
}

// decodeAs decodes an item that must be a T.
func decodeAs[T any](m item) (T, error) {
	var zero T
	v, err := decode(m)
	if err != nil {
		return zero, internal(err, "decoding an item")
	}
	t, ok := v.(T)
	if !ok {
		return zero, internal(fmt.Errorf("item is %T, want %T", v, zero), "decoding an item")
	}
	return t, nil
}

func str(m item, attr string) string {
	if s, ok := m[attr].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// decodeAll decodes items that must all be Ts.
func decodeAll[T any](items []item) ([]T, error) {
	vs := make([]T, len(items))
	for i, it := range items {
		v, err := decodeAs[T](it)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}
