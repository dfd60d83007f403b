package live

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/taskgraph/taskgraph/domain"
)

// The wire form of an event in the stream: JSON of private structs, so that
// renaming a Go field never changes what other instances (or older
// versions of this one) read. codecVersion names the form; a reader refuses
// a version it does not know rather than guess.
const codecVersion = 1

type wireEvent struct {
	V         int          `json:"v"`
	ID        string       `json:"id"`
	Kind      string       `json:"kind"`
	ProjectID string       `json:"projectId"`
	SubjectID string       `json:"subjectId"`
	ActorID   string       `json:"actorId"`
	At        time.Time    `json:"at"`
	Task      *wireTask    `json:"task,omitempty"`
	Comment   *wireComment `json:"comment,omitempty"`
	Project   *wireProject `json:"project,omitempty"`
}

type wireTask struct {
	ID          string    `json:"id"`
	ProjectID   string    `json:"projectId"`
	Title       string    `json:"title"`
	Description *string   `json:"description,omitempty"`
	Status      string    `json:"status"`
	DueDate     *string   `json:"dueDate,omitempty"`
	AssigneeID  *string   `json:"assigneeId,omitempty"`
	Tags        []string  `json:"tags,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	Version     int       `json:"version"`
	// CommentCount is the task's count of comments as the change left it
	// (a comment event's task has the count after it).
	CommentCount int `json:"commentCount"`
}

type wireComment struct {
	ID        string    `json:"id"`
	TaskID    string    `json:"taskId"`
	AuthorID  string    `json:"authorId"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"createdAt"`
}

type wireProject struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description *string   `json:"description,omitempty"`
	OwnerID     string    `json:"ownerId"`
	CreatedAt   time.Time `json:"createdAt"`
	// The project's task counts as the change left (or read) them.
	Todo       int `json:"todo"`
	InProgress int `json:"inProgress"`
	Done       int `json:"done"`
}

// encodeEvent returns the stream form of ev.
func encodeEvent(ev *domain.Event) ([]byte, error) {
	w := wireEvent{V: codecVersion, ID: ev.ID, Kind: string(ev.Kind), ProjectID: ev.ProjectID, SubjectID: ev.SubjectID,
		ActorID: ev.ActorID, At: ev.At.UTC()}
	if t := ev.Task; t != nil {
		w.Task = &wireTask{ID: t.ID, ProjectID: t.ProjectID, Title: t.Title, Description: t.Description,
			Status: string(t.Status), AssigneeID: t.AssigneeID, Tags: t.Tags, CreatedAt: t.CreatedAt,
			UpdatedAt: t.UpdatedAt, Version: t.Version, CommentCount: t.CommentCount}
		if t.DueDate != nil {
			s := t.DueDate.String()
			w.Task.DueDate = &s
		}
	}
	if c := ev.Comment; c != nil {
		w.Comment = &wireComment{ID: c.ID, TaskID: c.TaskID, AuthorID: c.AuthorID, Body: c.Body, CreatedAt: c.CreatedAt}
	}
	if p := ev.Project; p != nil {
		w.Project = &wireProject{ID: p.ID, Name: p.Name, Description: p.Description, OwnerID: p.OwnerID, CreatedAt: p.CreatedAt,
			Todo: p.TaskCounts.Todo, InProgress: p.TaskCounts.InProgress, Done: p.TaskCounts.Done}
	}
	return json.Marshal(w)
}

// decodeEvent reads the stream form of an event.
func decodeEvent(data []byte) (*domain.Event, error) {
	var w wireEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("decoding an event: %w", err)
	}
	if w.V != codecVersion {
		return nil, fmt.Errorf("an event of wire version %d; this server reads version %d", w.V, codecVersion)
	}
	ev := &domain.Event{ID: w.ID, Kind: domain.EventKind(w.Kind), ProjectID: w.ProjectID, SubjectID: w.SubjectID,
		ActorID: w.ActorID, At: w.At}
	if t := w.Task; t != nil {
		ev.Task = &domain.Task{ID: t.ID, ProjectID: t.ProjectID, Title: t.Title, Description: t.Description,
			Status: domain.TaskStatus(t.Status), AssigneeID: t.AssigneeID, Tags: t.Tags, CreatedAt: t.CreatedAt,
			UpdatedAt: t.UpdatedAt, Version: t.Version, CommentCount: t.CommentCount}
		if t.DueDate != nil {
			d, err := domain.ParseDate(*t.DueDate)
			if err != nil {
				return nil, fmt.Errorf("decoding an event's task due date: %w", err)
			}
			ev.Task.DueDate = &d
		}
	}
	if c := w.Comment; c != nil {
		ev.Comment = &domain.Comment{ID: c.ID, TaskID: c.TaskID, AuthorID: c.AuthorID, Body: c.Body, CreatedAt: c.CreatedAt}
	}
	if p := w.Project; p != nil {
		ev.Project = &domain.Project{ID: p.ID, Name: p.Name, Description: p.Description, OwnerID: p.OwnerID, CreatedAt: p.CreatedAt,
			TaskCounts: domain.TaskCounts{Todo: p.Todo, InProgress: p.InProgress, Done: p.Done}}
	}
	return ev, nil
}
