package domain

import (
	"context"
	"time"
)

// EventKind is what a committed change did to a project (the schema's
// ProjectEventKind).
type EventKind string

// The kinds of event.
const (
	EventProjectUpdated EventKind = "PROJECT_UPDATED"
	EventProjectDeleted EventKind = "PROJECT_DELETED"
	EventMemberAdded    EventKind = "MEMBER_ADDED"
	EventMemberRemoved  EventKind = "MEMBER_REMOVED"
	EventTaskCreated    EventKind = "TASK_CREATED"
	EventTaskUpdated    EventKind = "TASK_UPDATED"
	EventTaskDeleted    EventKind = "TASK_DELETED"
	EventCommentAdded   EventKind = "COMMENT_ADDED"
	EventCommentDeleted EventKind = "COMMENT_DELETED"
)

// Event is one committed change to a project: written in the change's own
// transaction (the outbox), then handed to the store's EventSink. It carries
// the objects as the change left them, so delivering it needs no read of
// them.
type Event struct {
	// ID is unique per committed change and stable across retries of its
	// publication (the transaction's client request token): the broker's
	// message id, so a retried publish is stored once.
	ID        string
	Kind      EventKind
	ProjectID string
	// SubjectID is what changed: the project, the added or removed member's
	// user id, the task or the comment.
	SubjectID string
	ActorID   string
	At        time.Time
	// Task: TASK_CREATED and TASK_UPDATED, the task as the change left it;
	// COMMENT_ADDED and COMMENT_DELETED, the task commented on.
	Task *Task
	// Comment: COMMENT_ADDED, the new comment.
	Comment *Comment
	// Project: PROJECT_UPDATED, MEMBER_ADDED, MEMBER_REMOVED, the project
	// as the change left it.
	Project *Project
}

// EventSink receives the events of committed changes. Publish returns once
// the event is durably recorded (the broker acknowledged it) or with an
// error; the store then leaves the event in its outbox for a later attempt.
// An event may be published more than once (a retry after a lost
// acknowledgement, the outbox sweep); sinks deduplicate by Event.ID.
type EventSink interface {
	Publish(ctx context.Context, ev *Event) error
}
