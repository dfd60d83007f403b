package loaders

import (
	"context"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/policy"
)

// Tasks by tag (TasksByTag, lists.go): a page of the tasks with a tag in
// the viewer's projects, read from the tag links in each project.

// fetchTasksByTag reads a page of the tasks with a tag in the projects the
// viewer may see: one Query per project of the viewer, merged by due date;
// the tasks are the copies on their tag links. The visibility check of the
// tasks found reads their projects, and, when the page's nodes select their
// assignee, the assignees in the same batch: after the viewer's memberships
// and the Queries, one round trip.
func (l *Loaders) fetchTasksByTag(ctx context.Context, k tagPageKey) (*domain.Conn[*domain.Task], error) {
	if _, err := domain.NormalizeTag(k.id); err != nil {
		return nil, err
	}
	u, err := l.profileOf(ctx, l.viewer) // the visibility check's fact, read first
	if err != nil {
		return nil, err
	}
	ids := policy.ProjectsSeen(u)
	_, assignees := l.tagAssignees.Load(k.pageKey)
	_, projects := l.taskProjects.Load(k.pageKey)
	visible := func(ctx context.Context, tasks []*domain.Task) ([]bool, error) {
		if assignees {
			for _, t := range tasks {
				if t.AssigneeID != nil {
					l.objects.Load(ctx, dynamo.UserRef(*t.AssigneeID)) // joins the visibility check's batch
				}
			}
		}
		return l.visibleTasks(ctx, tasks)
	}
	// The page's tasks are read with what their visibility check and their
	// assignees need, in one batch; those whose index entry lists all the
	// page selects (k.listed) are taken from it, not read, and not put into
	// the point reads' cache (they are partial).
	read := func(ctx context.Context, named []dynamo.Tagged) ([]*domain.Task, error) {
		var refs []dynamo.Ref
		for _, n := range named {
			if !k.listed || n.Listed == nil {
				refs = append(refs, dynamo.TaskRef(n.TaskID))
			}
			if projects { // a project { id name } is its copy on the profile (TaskProject)
				l.objects.Load(ctx, dynamo.ProjectRef(n.ProjectID))
			}
			if assignees && n.AssigneeID != "" {
				l.objects.Load(ctx, dynamo.UserRef(n.AssigneeID))
			}
		}
		got, err := loadSome[domain.Task](ctx, l, refs)
		if err != nil {
			return nil, err
		}
		tasks := make([]*domain.Task, len(named))
		for i, n := range named {
			if k.listed && n.Listed != nil {
				tasks[i] = n.Listed
			} else {
				tasks[i], got = got[0], got[1:]
			}
		}
		return tasks, nil
	}
	return l.store.TasksByTag(ctx, k.id, ids, k.page(), visible, read)
}

// listedFields are the fields of a task its tag index entry answers
// (dynamo.Tagged.Listed): a page of tasksByTag that selects no other on
// its nodes reads no task item.
var listedFields = map[string]bool{"id": true, "title": true, "dueDate": true, "project": true, "assignee": true, "__typename": true}

// tagPageKey is a page of tasksByTag, and whether its nodes select only
// listedFields (two selections of one page are two keys: one has partial
// tasks).
type tagPageKey struct {
	pageKey
	listed bool
}

// tagPageKeyOf is a page of tasksByTag; it notes whether the page's nodes
// select their assignee (tagAssignees) or their project's item
// (noteTaskProjects).
func tagPageKeyOf(l *Loaders, tag string, a Args, s *selection) tagPageKey {
	k := tagPageKey{pageKey: pageKeyOf(tag, a.page())}
	if s != nil {
		if selectsNode(s.oc, s.f, "assignee") {
			l.tagAssignees.Store(k.pageKey, struct{}{})
		}
		l.noteTaskProjects(s.oc, s.f, k.pageKey)
		k.listed = onlyFields(s.Nodes(), listedFields) // deferred fields too
	}
	return k
}
