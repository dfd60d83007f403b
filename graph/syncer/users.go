package syncer

import (
	"context"

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
	read := policy.LogsRead{} // the projects this page reads as visible, and the quiet ones
	var order []string        // the same, in that order
	for _, w := range pg.works {
		if w.visible && w.st != nil {
			read[w.st.ID], order = w.upTo, append(order, w.st.ID)
		}
	}
	for _, st := range pg.plan.quiet {
		read[st.ID], order = st.Pos, append(order, st.ID) // unchanged since
	}
	seen, err := stillSeen(ctx, pg.l, pg.out.candidates, order, read)
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

// stillSeen reports which of the users who may have stopped being visible
// the viewer still sees, as policy.SyncKeepsUser decides: through a
// membership of a project this page reads as visible or knows unchanged
// (read, in the order of order), begun by the position the page reads its
// log up to (policy.MembershipBegunBy). The facts: the users' profiles
// (which projects of read may be theirs), then those memberships, where
// they began in their logs (their entries' born,
// dynamo.Store.MembershipsBegun), read strongly consistently, at most 100
// a round (one BatchGetItem), each user's next ones until one keeps them
// or none is left: on the pages that weigh a user only. A user judged
// gone who is in fact shared comes back with the project's entries past
// the read (their membership's, or the join's whole log).
func stillSeen(ctx context.Context, l *loaders.Loaders, ids, order []string, read policy.LogsRead) ([]bool, error) {
	users, err := l.Profiles(ctx, ids)
	if err != nil {
		return nil, err
	}
	todo := make([][]string, len(ids)) // each user's projects of read by their profile
	for _, p := range order {
		for i, u := range users {
			if policy.SeesProject(u, p) {
				todo[i] = append(todo[i], p)
			}
		}
	}
	kept := make([]bool, len(ids))
	ms := make([][]policy.Membership, len(ids)) // each user's memberships read
	for i, id := range ids {
		kept[i] = policy.SyncKeepsUser(l.Viewer(), id, read, nil) // the viewer, with no read
	}
	for {
		var pairs [][2]string
		var of []int
		for i := range ids {
			if kept[i] || len(todo[i]) == 0 {
				continue
			}
			take := min(len(todo[i]), max(1, 100/len(ids)), 100-len(pairs))
			for _, p := range todo[i][:take] {
				pairs, of = append(pairs, [2]string{p, ids[i]}), append(of, i)
			}
			todo[i] = todo[i][take:]
		}
		if len(pairs) == 0 {
			return kept, nil
		}
		begun, err := l.Store().MembershipsBegun(ctx, pairs)
		if err != nil {
			return nil, err
		}
		for j, m := range begun {
			if m != nil {
				ms[of[j]] = append(ms[of[j]], *m)
			}
		}
		for i, id := range ids {
			kept[i] = kept[i] || policy.SyncKeepsUser(l.Viewer(), id, read, ms[i])
		}
	}
}
