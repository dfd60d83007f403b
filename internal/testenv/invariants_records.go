package testenv

import (
	"strconv"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// The store's own records in the whole-table check (CheckTable):
// idempotency records and outbox items.

func (c *checker) idempotency(it map[string]any) {
	op, result, project := str(it, "op"), str(it, "result"), str(it, "project")
	_, sk := dynamo.IdempotencyItemKey("", "", op)
	exp, err := strconv.ParseInt(str(it, "expiresAt"), 10, 64)
	switch kind := domain.KindOf(result); {
	case op == "" || str(it, "SK") != sk:
		c.violate("idempotency record %s %s: op %q", str(it, "PK"), str(it, "SK"), op)
	case str(it, "digest") == "":
		c.violate("idempotency record %s %s has no digest", str(it, "PK"), str(it, "SK"))
	case kind != domain.KindProject && kind != domain.KindTask && kind != domain.KindComment:
		c.violate("idempotency record %s %s: result %q is no project, task or comment id", str(it, "PK"), str(it, "SK"), result)
	case project != "" && domain.KindOf(project) != domain.KindProject:
		c.violate("idempotency record %s %s: project %q is no project id", str(it, "PK"), str(it, "SK"), project)
	case err != nil || exp <= 0:
		c.violate("idempotency record %s %s: expiresAt %v", str(it, "PK"), str(it, "SK"), it["expiresAt"])
	}
}

// eventSnapshots says which snapshots (task, comment, project) each event
// kind carries.
var eventSnapshots = map[domain.EventKind][3]bool{
	domain.EventProjectUpdated: {false, false, true},
	domain.EventProjectDeleted: {false, false, false},
	domain.EventMemberAdded:    {false, false, true},
	domain.EventMemberRemoved:  {false, false, true},
	domain.EventTaskCreated:    {true, false, false},
	domain.EventTaskUpdated:    {true, false, false},
	domain.EventTaskDeleted:    {false, false, false},
	domain.EventCommentAdded:   {true, true, false},
	domain.EventCommentDeleted: {true, false, false},
}

func (c *checker) outbox(it map[string]any) {
	id, pk, sk := str(it, "id"), str(it, "PK"), str(it, "SK")
	pl, _ := it["payload"].(map[string]any)
	if pl == nil {
		c.violate("outbox item %s %s has no payload", pk, sk)
		return
	}
	pid, kind := str(pl, "projectId"), domain.EventKind(str(pl, "kind"))
	at, err := time.Parse(time.RFC3339Nano, str(pl, "at"))
	exp, experr := strconv.ParseInt(str(it, "expiresAt"), 10, 64)
	want, known := eventSnapshots[kind]
	wpk, wsk := dynamo.OutboxItemKey(id, at)
	switch {
	case id == "" || str(pl, "id") != id:
		c.violate("outbox item %s %s: id %q, payload id %q", pk, sk, id, str(pl, "id"))
	case err != nil:
		c.violate("outbox item %s %s: at %q is no time", pk, sk, str(pl, "at"))
	case pk != wpk || sk != wsk:
		c.violate("outbox item %s %s: key, want %q %q", pk, sk, wpk, wsk)
	case experr != nil || exp <= 0:
		c.violate("outbox item %s %s: expiresAt %v", pk, sk, it["expiresAt"])
	case !known:
		c.violate("outbox item %s %s: kind %q", pk, sk, kind)
	case domain.KindOf(pid) != domain.KindProject:
		c.violate("outbox item %s %s: project %q is no project id", pk, sk, pid)
	case str(pl, "actorId") == "" || str(pl, "subjectId") == "":
		c.violate("outbox item %s %s: no actor or subject", pk, sk)
	}
	for i, name := range []string{"task", "comment", "project"} {
		snap, has := pl[name].(map[string]any)
		if has != want[i] {
			c.violate("outbox item %s %s (%s): %s snapshot present %v, want %v", pk, sk, kind, name, has, want[i])
			continue
		}
		switch {
		case !has:
		case name == "task" && str(snap, "projectId") != pid, name == "project" && str(snap, "id") != pid:
			c.violate("outbox item %s %s: %s snapshot of another project than %s", pk, sk, name, pid)
		case name == "comment" && str(snap, "id") != str(pl, "subjectId"):
			c.violate("outbox item %s %s: comment snapshot %s, subject %s", pk, sk, str(snap, "id"), str(pl, "subjectId"))
		}
	}
}
