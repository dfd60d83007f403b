package dynamo

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/policy"
)

var errProjectNotFound = domain.Errorf(domain.ENOTFOUND, "project not found")

// A project is read by reference (ProjectRef, Get); the projects of a user
// are their memberships (member.go).

// CreateProject creates a project whose owner is the viewer. Returns
// EINVALID, ENOTFOUND (no profile).
func (s *Store) CreateProject(ctx context.Context, viewer string, in domain.ProjectInput) (*domain.Project, error) {
	return once(ctx, s, func() (*domain.Project, error) { return s.createProject(ctx, viewer, in) }, replayProject)
}

func (s *Store) createProject(ctx context.Context, viewer string, in domain.ProjectInput) (*domain.Project, error) {
	n, err := domain.CleanName("name", in.Name)
	if err != nil {
		return nil, err
	}
	desc, err := domain.CleanText("description", in.Description)
	if err != nil {
		return nil, err
	}
	now := s.now()
	p := &domain.Project{ID: domain.ProjectIDOf(s.ids.next(now)), Name: n, Description: desc, OwnerID: viewer, CreatedAt: now, SeqAt: now}
	pu := ulidOf(p.ID)
	var t txn
	t.logTo(pu, 0, now)
	// The owner's copy: no profile, no project; a profile with as many
	// projects as the cap admits, none either.
	s.joinTo(&t, viewer, p.ID, p.Name, &profileMiss{none: ErrNoProfile, full: s.errOwnCap()})
	e := s.logChange(&t, viewer, entryAt{}, &now) // the owner's member entry: position 1
	p.Seq, p.ProjectSeq = e.pos, e.pos
	t.put(s.table, projectToItem(p, 1), ptr(absent()), nil)
	t.put(s.table, withEntry(memberToItem(&domain.Member{ProjectID: p.ID, UserID: viewer, Role: domain.RoleOwner, JoinedAt: now}), e),
		ptr(absent()), nil)
	t.result, t.project = p.ID, p.ID
	if err := s.commit(ctx, &t); err != nil {
		return nil, err
	}
	return p, nil
}

// access reads a project and the viewer's profile (visibility) in one
// strongly consistent call (Guard) and reports ENOTFOUND when the project
// is missing or the viewer may not see it (policy.SeesProject), then what
// may (a rule of the policy over the viewer and the project; nil: seeing
// it is enough) says of what the caller is about to do.
func (s *Store) access(ctx context.Context, viewer, projectID string, may func(viewer string, p *domain.Project) error) (*domain.Project, *domain.User, item, error) {
	p, err := domain.ParseProjectID(projectID)
	if err != nil {
		return nil, nil, nil, err
	}
	items, err := s.getItems(WithConsistency(ctx, Guard), []key{projectKey(p), userKey(viewer)})
	if err != nil {
		return nil, nil, nil, err
	}
	var proj *domain.Project
	var u *domain.User
	if items[0] != nil {
		if proj, err = decodeAs[*domain.Project](items[0]); err != nil {
			return nil, nil, nil, err
		}
	}
	if items[1] != nil {
		if u, err = decodeAs[*domain.User](items[1]); err != nil {
			return nil, nil, nil, err
		}
	}
	if proj == nil || !policy.SeesProject(u, proj.ID) {
		return nil, nil, nil, errProjectNotFound
	}
	if may != nil {
		if err := may(viewer, proj); err != nil {
			return nil, nil, nil, err
		}
	}
	return proj, u, items[0], nil
}

// ownerGuard is the write-time guard of policy.MayManageProject (and of
// the owner's right of policy.MayDeleteComment): the condition, on the
// project's item, that it exists and its owner, the fact the rule read,
// is still the viewer when the write commits.
func ownerGuard(viewer string) expression.ConditionBuilder {
	return exists().And(expression.Name("ownerId").Equal(expression.Value(viewer)))
}

// notOwnerGuard is the write-time guard of policy.MayLeave: the condition,
// on the project's item, that it exists and its owner, the fact the rule
// read, is still not the viewer when the write commits.
func notOwnerGuard(viewer string) expression.ConditionBuilder {
	return exists().And(expression.Name("ownerId").NotEqual(expression.Value(viewer)))
}

// ProjectPatch changes a project; fields left out stay as they are.
type ProjectPatch struct {
	ID          string
	Name        domain.Opt[*string] // null is refused: a project must have a name
	Description domain.Opt[*string] // null clears it
}

// UpdateProject changes a project's name or description; owner only.
// Returns EINVALID, ENOTFOUND, EFORBIDDEN, ECONFLICT.
func (s *Store) UpdateProject(ctx context.Context, viewer string, in ProjectPatch) (*domain.Project, error) {
	var n string
	var desc *string
	var err error
	if in.Name.Set {
		if in.Name.Value == nil {
			return nil, domain.Errorf(domain.EINVALID, "name cannot be cleared")
		}
		if n, err = domain.CleanName("name", *in.Name.Value); err != nil {
			return nil, err
		}
	}
	if in.Description.Set {
		if desc, err = domain.CleanText("description", in.Description.Value); err != nil {
			return nil, err
		}
	}
	pu, err := domain.ParseProjectID(in.ID)
	if err != nil {
		return nil, err
	}
	return once(ctx, s, func() (*domain.Project, error) {
		return retryOnChange(ctx, concurrentChange, func() (*domain.Project, error) {
			unlock, err := s.lockProject(ctx, pu)
			if err != nil {
				return nil, err
			}
			defer unlock()
			p, _, raw, err := s.access(ctx, viewer, in.ID, policy.MayManageProject)
			if err != nil {
				return nil, err
			}
			old := p.Name
			if in.Name.Set {
				p.Name = n
			}
			if in.Description.Set {
				p.Description = desc
			}
			renamed := p.Name != old
			var members []*domain.Member
			if renamed { // every member's copy of the name (copies.go): the members as of the seq read
				if members, err = s.MembersOf(ctx, p.ID); err != nil {
					return nil, err
				}
			}
			rev, seq := revOf(raw), p.Seq
			p.Seq, p.ProjectSeq = seq+1, seq+1 // a change of the project itself: the next position of its log
			p.SeqAt = s.now()
			ev := changeEvent(domain.EventProjectUpdated, p.ID, p.ID, viewer, time.Time{}, nil, nil, p)
			cond := ownerGuard(viewer).And(revIs(rev)).And(seqIs(seq)).And(unmarked()) // syncmark.go
			if renamed {
				t := txn{result: p.ID, project: p.ID, event: ev}
				t.put(s.table, projectToItem(p, rev+1), &cond, errRetry)
				t.returnOld()
				for _, m := range members {
					s.copyTo(&t, m.UserID, p.ID, p.Name, errRetry)
				}
				err = s.commit(ctx, &t)
			} else {
				err = s.put(ctx, projectToItem(p, rev+1), cond, p.ID, p.ID, ev)
			}
			if err == nil {
				s.rememberSeq(pu, p.Seq)
			}
			return p, err
		})
	}, replayProject)
}

// DeleteProject deletes a project; owner only. The project and everything
// under it disappear at once for every reader; its memberships, tasks,
// comments and tag links are removed afterwards by the cleanup worker.
// Returns EINVALID, ENOTFOUND, EFORBIDDEN.
func (s *Store) DeleteProject(ctx context.Context, viewer, id string) error {
	_, err := once(ctx, s, func() (string, error) { return id, s.deleteProject(ctx, viewer, id) }, replayDeleted())
	return err
}

func (s *Store) deleteProject(ctx context.Context, viewer, id string) error {
	_, err := retryOnChange(ctx, concurrentChange, func() (struct{}, error) {
		p, _, _, err := s.access(ctx, viewer, id, policy.MayManageProject)
		if err != nil {
			return struct{}{}, err
		}
		// Every member's copy goes with the project (copies.go): the
		// members as of the seq read, which the deletion's condition holds.
		members, err := s.MembersOf(ctx, p.ID)
		if err != nil {
			return struct{}{}, err
		}
		pu := ulidOf(p.ID)
		now := s.now()
		var t txn
		t.del(s.table, projectKey(pu), ptr(ownerGuard(viewer).And(seqIs(p.Seq)).And(unmarked())), errRetry) // no mark outlives it
		t.returnOld()
		t.put(s.table, cleanupToItem(cleanupProject, pu, now), nil, nil)
		for _, m := range members {
			s.dropCopy(&t, m.UserID, p.ID)
		}
		t.result, t.project = p.ID, p.ID
		t.event = changeEvent(domain.EventProjectDeleted, p.ID, p.ID, viewer, now, nil, nil, nil)
		return struct{}{}, s.commit(ctx, &t)
	})
	if err != nil {
		return err
	}
	s.KickCleanup()
	return nil
}
