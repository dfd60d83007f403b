package syncer

import (
	"context"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/policy"
)

// weighUsers makes a tombstone of each user the page's entries say may
// have stopped being visible (a removed member, a member of a project
// left) whom the viewer no longer sees (stillSeen).
func (pg *pageRun) weighUsers(ctx context.Context) error {
	if len(pg.out.candidates) == 0 {
		return nil
	}
	var tracked []sharedProject // the projects this page reads as visible, and the quiet ones
	for _, w := range pg.works {
		if w.visible && w.st != nil {
			tracked = append(tracked, sharedProject{id: w.st.ID, upTo: w.upTo})
		}
	}
	for _, st := range pg.plan.quiet {
		tracked = append(tracked, sharedProject{id: st.ID, upTo: st.Pos})
	}
	seen, err := stillSeen(ctx, pg.l, pg.out.candidates, tracked)
	if err != nil {
		return err
	}
	for i, id := range pg.out.candidates {
		if !seen[i] {
			pg.out.tomb(id, "User")
		}
	}
	return nil
}

// sharedProject is a project a page counts as the viewer's when it weighs
// a user: read as visible up to upTo (a quiet one: unchanged since upTo).
type sharedProject struct {
	id   string
	upTo int64
}

// stillSeen reports which of the users who may have stopped being visible
// the viewer still sees (policy.SeesUser), counting only the projects this
// page reads as visible or knows unchanged (tracked) and, of each, only a
// membership of the user that began at or before the position the page
// reads its log up to (its entry's born, dynamo.Store.MembershipsBorn).
// Then viewer and user were both members when the page read the viewer's
// profile, and any later loss is met by a later read of that project's
// log: the user's removal lies past this page's read, the viewer's
// departure past the user's born. Anything looser keeps a user for good: a
// user who joined after the viewer left (their born is past the
// departure, which a leave passes over), or shared through a project the
// token does not follow yet (joined after the page's read: no leave of it
// would ever weigh them). A user judged gone who is in fact shared comes
// back with the project's entries past the read (their membership's, or
// the join's whole log). The memberships are read strongly consistently,
// at most 100 a round (one BatchGetItem), each user's next ones until one
// keeps them or none is left: on the pages that weigh a user only.
func stillSeen(ctx context.Context, l *loaders.Loaders, ids []string, tracked []sharedProject) ([]bool, error) {
	users, err := l.Profiles(ctx, ids)
	if err != nil {
		return nil, err
	}
	viewer := &domain.User{ID: l.Viewer(), Projects: map[string]string{}} // as the page sees them
	todo := make([][]sharedProject, len(ids))                             // each user's projects shared by their profile
	for _, p := range tracked {
		viewer.Projects[p.id] = ""
		for i, u := range users {
			if policy.SeesProject(u, p.id) {
				todo[i] = append(todo[i], p)
			}
		}
	}
	kept := make([]*domain.User, len(ids)) // each user as the page may count them: memberships born by its reads
	for {
		var pairs [][2]string
		var of []int
		var in []sharedProject
		for i := range ids {
			if kept[i] != nil || len(todo[i]) == 0 {
				continue
			}
			take := min(len(todo[i]), max(1, 100/len(ids)), 100-len(pairs))
			for _, p := range todo[i][:take] {
				pairs, of, in = append(pairs, [2]string{p.id, ids[i]}), append(of, i), append(in, p)
			}
			todo[i] = todo[i][take:]
		}
		if len(pairs) == 0 {
			break
		}
		born, err := l.Store().MembershipsBorn(ctx, pairs)
		if err != nil {
			return nil, err
		}
		for j, b := range born {
			if !policy.MembershipBegunBy(b, in[j].upTo) {
				continue
			}
			if kept[of[j]] == nil {
				kept[of[j]] = &domain.User{ID: ids[of[j]], Projects: map[string]string{}}
			}
			kept[of[j]].Projects[pairs[j][0]] = ""
		}
	}
	seen := make([]bool, len(ids))
	for i, id := range ids {
		seen[i] = policy.SeesUser(l.Viewer(), viewer, id, kept[i])
	}
	return seen, nil
}
