package model

import (
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
)

// ProjectEvent is one event as a subscriber receives it: the committed
// change (domain.Event, which carries the objects as the change left them)
// and the cursor that resumes the stream after it. Its fields that name
// other objects resolve through the event's shared loaders (graph/live.go).
type ProjectEvent struct {
	Cursor    string
	Kind      domain.EventKind
	At        time.Time
	ProjectID string
	SubjectID string
	Event     *domain.Event
	// Scope is the delivery's resolution scope (graph's per-event loaders
	// and the subscriber's viewer); opaque here.
	Scope any
}

// ProjectEventKinds are the values of the ProjectEventKind enum.
var ProjectEventKinds = []domain.EventKind{domain.EventProjectUpdated, domain.EventProjectDeleted,
	domain.EventMemberAdded, domain.EventMemberRemoved, domain.EventTaskCreated, domain.EventTaskUpdated,
	domain.EventTaskDeleted, domain.EventCommentAdded, domain.EventCommentDeleted}

// MarshalProjectEventKind writes a ProjectEventKind (null for a value it
// does not have).
func MarshalProjectEventKind(k domain.EventKind) graphql.Marshaler {
	return marshalEnum(k, ProjectEventKinds)
}

// UnmarshalProjectEventKind reads a ProjectEventKind: exactly one of its
// names.
func UnmarshalProjectEventKind(v any) (domain.EventKind, error) {
	return unmarshalEnum("ProjectEventKind", v, ProjectEventKinds)
}
