package dynamo

import (
	"context"
	"sync"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/policy"
)

// Visibility: a project, and everything under it, is visible to its
// members while the project exists (policy.SeesProject, the one rule). It
// reads one fact, the viewer's profile: it carries the projects its user
// is a member of (copies.go), written in the transactions that add and
// remove members and delete projects. The GraphQL loaders read it with the
// rest of a level's reads (eventually consistent on screens: Screen), the
// live hub for all of an event's recipients at once (Membership,
// EventCheck), the mutations' access checks and the idempotent replays
// beside the items they read anyway (Guard), a sync strongly (SyncRead).
// The transactions that write on the strength of it check the viewer's
// membership item, which the same transactions as the copy write
// (memberGuard).

// Membership reads whether the project exists and which of users may see
// it, strongly consistent (EventCheck): the project and the users'
// membership items, one BatchGetItem for up to 99 users, else one Query
// of the project's members beside a read of the project (cheaper than a
// profile each for an event's many recipients), given to
// policy.MemberSees as they are (the project, a policy.Membership). A
// membership item and the copy on its user's profile are written and
// removed in the same transactions, and a project's deletion removes the
// copies with the project item, so they answer as the profile's copies
// answer policy.SeesProject. The live hub's check of each event and each
// event's re-check once resolved (graph/subscription/deliver.go) call it,
// by this one name. Returns
// EINVALID for a malformed project id, EUNAVAILABLE or EINTERNAL when the
// table fails.
func (s *Store) Membership(ctx context.Context, project string, users []string) (exists bool, visible map[string]bool, err error) {
	ctx = WithConsistency(ctx, EventCheck)
	var p *domain.Project
	ms := make(map[string]*domain.Member, len(users))
	if len(users) < 100 {
		refs := make([]Ref, 0, len(users)+1)
		refs = append(refs, ProjectRef(project))
		for _, u := range users {
			refs = append(refs, MemberRef(project, u))
		}
		vals, errs := s.Get(ctx, refs)
		for i, err := range errs {
			if err != nil && !domain.IsNotFound(err) {
				return false, nil, err
			}
			if m, ok := vals[i].(*domain.Member); ok && i > 0 && err == nil {
				ms[users[i-1]] = m
			}
		}
		p, _ = vals[0].(*domain.Project)
	} else {
		var wg sync.WaitGroup
		var perr error
		wg.Add(1)
		client.Go(func() {
			defer wg.Done()
			vals, errs := s.Get(ctx, []Ref{ProjectRef(project)})
			p, _ = vals[0].(*domain.Project)
			perr = errs[0]
		})
		all, err := s.MembersOf(ctx, project)
		wg.Wait()
		if err != nil {
			return false, nil, err
		}
		if perr != nil && !domain.IsNotFound(perr) {
			return false, nil, perr
		}
		for _, m := range all {
			ms[m.UserID] = m
		}
	}
	visible = make(map[string]bool, len(users))
	for _, u := range users {
		visible[u] = policy.MemberSees(p, membershipOf(ms[u]))
	}
	return p != nil, visible, nil
}

// membershipOf is the policy's fact of a membership item (nil: none).
func membershipOf(m *domain.Member) *policy.Membership {
	if m == nil {
		return nil
	}
	return &policy.Membership{ProjectID: m.ProjectID, UserID: m.UserID}
}
