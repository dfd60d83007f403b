package graph

import (
	"context"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// Visibility: a project, and everything under it, is visible to its
// members while the project exists (dynamo.Visible, the one rule). Both
// facts are point reads through the loaders, so checking any number of
// projects costs one batched read, shared with the rest of the level.

// visibleProjects reports, for each project id, whether the viewer may see
// it. Every check of a call joins one batch.
func (l *Loaders) visibleProjects(ctx context.Context, ids []string) ([]bool, error) {
	if len(ids) > 0 && l.profileAhead.Load() {
		l.objects.Load(ctx, dynamo.UserRef(l.viewer)) // me waits for it (Loaders.me)
	}
	type pair struct{ p, m func() (any, error) }
	ths := make([]pair, len(ids))
	for i, id := range ids {
		ths[i] = pair{l.objects.Load(ctx, dynamo.ProjectRef(id)), l.objects.Load(ctx, dynamo.MemberRef(id, l.viewer))}
	}
	ok := make([]bool, len(ids))
	for i, th := range ths {
		p, perr := th.p()
		m, merr := th.m()
		for _, err := range []error{perr, merr} {
			if err != nil && !domain.IsNotFound(err) {
				return nil, err
			}
		}
		proj, _ := p.(*domain.Project)
		member, _ := m.(*domain.Member)
		ok[i] = dynamo.Visible(proj, member) // the one rule (dynamo/visibility.go)
	}
	return ok, nil
}

func (l *Loaders) canSeeProject(ctx context.Context, id string) (bool, error) {
	ok, err := l.visibleProjects(ctx, []string{id})
	if err != nil {
		return false, err
	}
	return ok[0], nil
}

// visibleTasks keeps the tasks whose project the viewer may see.
func (l *Loaders) visibleTasks(ctx context.Context, tasks []*domain.Task) ([]bool, error) {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ProjectID
	}
	return l.visibleProjects(ctx, ids)
}

func (l *Loaders) sharesProject(ctx context.Context, mine, theirs []string) (bool, error) {
	set := make(map[string]bool, len(mine))
	for _, id := range mine {
		set[id] = true
	}
	var common []string
	for _, id := range theirs {
		if set[id] {
			common = append(common, id)
		}
	}
	ok, err := l.visibleProjects(ctx, common)
	if err != nil {
		return false, err
	}
	for _, v := range ok {
		if v {
			return true, nil
		}
	}
	return false, nil
}

// canSeeUser reports whether the viewer may see the user id: themselves, or
// someone they share a visible project with.
func (l *Loaders) canSeeUser(ctx context.Context, id string) (bool, error) {
	if id == l.viewer {
		return true, nil
	}
	theirs := l.projectIDsOfUserLoader().Load(ctx, id)
	mine, err := l.ProjectIDsOfUser(ctx, l.viewer)
	if err != nil {
		return false, err
	}
	ids, err := theirs()
	if err != nil {
		return false, err
	}
	return l.sharesProject(ctx, mine, ids)
}
