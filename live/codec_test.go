package live

import (
	"reflect"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
)

// Every field of an event's objects survives the stream, counters included
// (a comment event's task carries its count after the comment; a replica
// kept by events shows it).
func TestAnEventSurvivesItsWireForm(t *testing.T) {
	at := time.Date(2026, 8, 25, 12, 0, 0, 123, time.UTC)
	due, _ := domain.ParseDate("2026-09-01")
	desc, who := "a description", "bob"
	full := &domain.Event{ID: "tok", Kind: domain.EventCommentAdded, ProjectID: "prj#1", SubjectID: "cmt#1", ActorID: "alice", At: at,
		Task: &domain.Task{ID: "tsk#1", ProjectID: "prj#1", Title: "T", Description: &desc, Status: domain.StatusDone, DueDate: &due,
			AssigneeID: &who, Tags: []string{"a", "b"}, CreatedAt: at, UpdatedAt: at, Version: 7, CommentCount: 3},
		Comment: &domain.Comment{ID: "cmt#1", TaskID: "tsk#1", AuthorID: "alice", Body: "hi", CreatedAt: at},
		Project: &domain.Project{ID: "prj#1", Name: "P", Description: &desc, OwnerID: "alice", CreatedAt: at,
			TaskCounts: domain.TaskCounts{Todo: 4, InProgress: 2, Done: 9}}}
	bare := &domain.Event{ID: "tok2", Kind: domain.EventProjectDeleted, ProjectID: "prj#1", SubjectID: "prj#1", ActorID: "alice", At: at}
	for name, ev := range map[string]*domain.Event{"every field": full, "no objects": bare} {
		t.Run(name, func(t *testing.T) {
			b, err := encodeEvent(ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeEvent(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, ev) {
				t.Errorf("decoded %+v\nwant    %+v\nfrom %s", got, ev, b)
			}
		})
	}
	t.Run("another version is refused", func(t *testing.T) {
		if _, err := decodeEvent([]byte(`{"v":2,"id":"x"}`)); err == nil {
			t.Error("version 2 was read")
		}
	})
}
