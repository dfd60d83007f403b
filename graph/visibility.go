package graph

import (
	"context"
	"slices"

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

// canSeeUser reports whether the viewer may see the user id: themselves, or
// someone they share a visible project with (visibleUsers).
func (l *Loaders) canSeeUser(ctx context.Context, id string) (bool, error) {
	ok, err := l.visibleUsers(ctx, []string{id})
	if err != nil {
		return false, err
	}
	return ok[0], nil
}

// visibleUsers reports, for each user id, whether the viewer may see them:
// themselves, or someone who shares a project they may see
// (visibleProjects). The users' memberships are read at once (one Query
// each, with the viewer's), the projects in one batch.
func (l *Loaders) visibleUsers(ctx context.Context, ids []string) ([]bool, error) {
	theirs := make([]func() ([]string, error), len(ids))
	for i, id := range ids {
		if id != l.viewer {
			theirs[i] = l.projectIDsOfUserLoader().Load(ctx, id)
		}
	}
	mine, err := l.ProjectIDsOfUser(ctx, l.viewer)
	if err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(mine))
	for _, id := range mine {
		set[id] = true
	}
	var common []string
	shared := make([][]int, len(ids)) // per user, their common projects' indexes in common
	for i, th := range theirs {
		if th == nil {
			continue
		}
		ps, err := th()
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if set[p] {
				shared[i] = append(shared[i], len(common))
				common = append(common, p)
			}
		}
	}
	ok, err := l.visibleProjects(ctx, common)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(ids))
	for i := range ids {
		out[i] = theirs[i] == nil || slices.ContainsFunc(shared[i], func(j int) bool { return ok[j] })
	}
	return out, nil
}
