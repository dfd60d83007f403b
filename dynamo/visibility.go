package dynamo

import (
	"context"
	"sync"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// Visibility: a project, and everything under it, is visible to its
// members while the project exists. Every path that decides who may see a
// project applies that rule to the two facts it reads, the project item
// and the viewer's member item: the GraphQL loaders (batched with the
// rest of a level's reads), the live hub (Membership, for all of an
// event's recipients at once), the mutations' access checks and the
// idempotent replays (beside the items they read anyway).

// Visible is the rule: the project exists and the viewer is a member.
func Visible(p *domain.Project, m *domain.Member) bool { return p != nil && m != nil }

// Membership reads the project (nil when it does not exist) and the
// memberships of those of users who are its members, in one strongly
// consistent read: one BatchGetItem for up to 99 users, else one Query of
// the project's members beside a read of the project. The user u may see
// the project when Visible(p, ms[u]). Returns EINVALID for a malformed
// project id, EUNAVAILABLE or EINTERNAL when the table fails.
func (s *Store) Membership(ctx context.Context, project string, users []string) (p *domain.Project, ms map[string]*domain.Member, err error) {
	ms = make(map[string]*domain.Member, len(users))
	if len(users) < 100 {
		refs := make([]Ref, 0, len(users)+1)
		refs = append(refs, ProjectRef(project))
		for _, u := range users {
			refs = append(refs, MemberRef(project, u))
		}
		vals, errs := s.Get(ctx, refs)
		for i, err := range errs {
			if err != nil && !domain.IsNotFound(err) {
				return nil, nil, err
			}
			if m, ok := vals[i].(*domain.Member); ok && i > 0 && err == nil {
				ms[users[i-1]] = m
			}
		}
		p, _ = vals[0].(*domain.Project)
		return p, ms, nil
	}
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
		return nil, nil, err
	}
	if perr != nil && !domain.IsNotFound(perr) {
		return nil, nil, perr
	}
	if perr != nil {
		p = nil
	}
	want := make(map[string]bool, len(users))
	for _, u := range users {
		want[u] = true
	}
	for _, m := range all {
		if want[m.UserID] {
			ms[m.UserID] = m
		}
	}
	return p, ms, nil
}
