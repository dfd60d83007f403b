package dynamo

import (
	"context"
	"errors"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/policy"
)

var errAlreadyMember = errors.New("already a member")

// A single membership is read by reference (MemberRef, Get).

// ProjectsOfUser is access pattern 2 as the memberships' GSI1 entries list
// it: the user's memberships, newest project first, those keep admits.
// The screens list a user's projects from their profile's copies instead
// (ProjectsPage: the same pages and cursors, no Query); this read is the
// reference they are tested against, and what a table without the copies
// would read. Returns EINVALID, EUNAVAILABLE.
func (s *Store) ProjectsOfUser(ctx context.Context, userID string, page domain.Page, keep Filter[*domain.Member]) (*domain.Conn[*domain.Member], error) {
	if err := domain.ValidUserID(userID); err != nil {
		return nil, err
	}
	return listAs(ctx, s, projectsOfUser.of(userProjectsPK(userID)), page, keep)
}

// MembersOf returns a project's memberships, ordered by user id. Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) MembersOf(ctx context.Context, projectID string) ([]*domain.Member, error) {
	p, err := domain.ParseProjectID(projectID)
	if err != nil {
		return nil, err
	}
	return queryAllAs[*domain.Member](ctx, s, membersOfProject, projectPK(p))
}

// AddProjectMember makes a user a member of a project; owner only. Adding a
// member again changes nothing. Returns EINVALID, ENOTFOUND (project or
// user), EFORBIDDEN.
func (s *Store) AddProjectMember(ctx context.Context, viewer, projectID, userID string) (*domain.Project, error) {
	return once(ctx, s, func() (*domain.Project, error) { return s.addProjectMember(ctx, viewer, projectID, userID) }, replayProject)
}

func (s *Store) addProjectMember(ctx context.Context, viewer, projectID, userID string) (*domain.Project, error) {
	if err := domain.ValidUserID(userID); err != nil {
		return nil, err
	}
	pu, err := domain.ParseProjectID(projectID)
	if err != nil {
		return nil, err
	}
	return retryOnChange(ctx, concurrentChange, func() (*domain.Project, error) {
		unlock, err := s.lockProject(ctx, pu)
		if err != nil {
			return nil, err
		}
		defer unlock()
		p, _, _, err := s.access(ctx, viewer, projectID, policy.MayManageProject)
		if err != nil {
			return nil, err
		}
		if userID == viewer { // the owner: a member already
			return p, nil
		}
		// The members as of the seq read (the transaction's condition):
		// at most MaxMembers (copies.go).
		members, err := s.MembersOf(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(members, func(m *domain.Member) bool { return m.UserID == userID }) {
			return p, nil // a member already: nothing changes
		}
		if len(members) >= MaxMembers {
			return nil, errTooManyMembers
		}
		now := s.now()
		var t txn
		t.logTo(pu, p.Seq, now)
		t.logProject() // its members changed
		t.onProject(pu, ownerGuard(viewer), nil, errProjectNotFound)
		e := s.logChange(&t, userID, entryAt{}, &now)
		t.put(s.table, withEntry(memberToItem(&domain.Member{ProjectID: p.ID, UserID: userID, Role: domain.RoleMember, JoinedAt: now}), e),
			ptr(absent()), errAlreadyMember)
		// After the membership: a user who is a member already (a race)
		// fails that condition first, and the answer is no change.
		s.joinTo(&t, userID, p.ID, p.Name, &profileMiss{none: domain.Errorf(domain.ENOTFOUND, "user %s not found", domain.Clip(userID)),
			full: s.errUserCap(userID)})
		t.result, t.project = p.ID, p.ID
		// Adding a member again commits nothing (errAlreadyMember): no event.
		t.event = changeEvent(domain.EventMemberAdded, p.ID, userID, viewer, now, nil, nil, p)
		if err := s.commit(ctx, &t); err != nil && !errors.Is(err, errAlreadyMember) {
			return nil, err
		}
		return p, nil
	})
}

// unassignBatch is how many items (tasks and their tag links) one
// transaction of a member's removal writes besides the membership itself.
const unassignBatch = 90

// RemoveProjectMember removes a member from a project and unassigns the
// tasks of the project assigned to them; owner only; the owner cannot be
// removed. Returns EINVALID, ENOTFOUND (project, or no such member),
// EFORBIDDEN, ECONFLICT.
func (s *Store) RemoveProjectMember(ctx context.Context, viewer, projectID, userID string) (*domain.Project, error) {
	return once(ctx, s, func() (*domain.Project, error) {
		if err := domain.ValidUserID(userID); err != nil {
			return nil, err
		}
		return s.removeMember(ctx, viewer, projectID, userID, removal{
			may:   func(viewer string, p *domain.Project) error { return policy.MayRemoveMember(viewer, p, userID) },
			guard: ownerGuard(viewer),
		})
	}, replayProject)
}

// LeaveProject removes the viewer from a project they are a member of,
// as RemoveProjectMember removes a member (their tasks unassigned, the
// same event, copy, counters and change log), but by themselves; the
// owner cannot leave (policy.MayLeave). It answers the project's id.
// Returns EINVALID, ENOTFOUND (the project, or not a member), ECONFLICT.
func (s *Store) LeaveProject(ctx context.Context, viewer, projectID string) (string, error) {
	return once(ctx, s, func() (string, error) {
		p, err := s.removeMember(ctx, viewer, projectID, viewer, removal{may: policy.MayLeave, guard: notOwnerGuard(viewer)})
		if err != nil {
			return "", err
		}
		return p.ID, nil
	}, replayDeleted())
}

// removal is who removes a member: the rule of the policy that allows it,
// and its write-time guard, the condition on the project's item that the
// fact the rule read still holds (the owner, or that the viewer is not).
type removal struct {
	may   func(viewer string, p *domain.Project) error
	guard expression.ConditionBuilder
}

// removeMember removes user userID from a project, as how allows the
// viewer to, reading again when their tasks changed meanwhile.
func (s *Store) removeMember(ctx context.Context, viewer, projectID, userID string, how removal) (*domain.Project, error) {
	return retryOnChange(ctx, "the member's tasks changed while they were being removed; retry", func() (*domain.Project, error) {
		return s.removeOnce(ctx, viewer, projectID, userID, how)
	})
}

// removeOnce reads the membership and the member's tasks in the project,
// unassigns them (in batches, when there are more than one transaction
// holds) and removes the membership, its copy on the member's profile and
// its entry, with the departure and the event, in the last transaction.
func (s *Store) removeOnce(ctx context.Context, viewer, projectID, userID string, how removal) (*domain.Project, error) {
	pu0, err := domain.ParseProjectID(projectID)
	if err != nil {
		return nil, err
	}
	unlock, err := s.lockProject(ctx, pu0)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p, _, _, err := s.access(ctx, viewer, projectID, how.may)
	if err != nil {
		return nil, err
	}
	pu := ulidOf(p.ID)
	mi, err := s.getOne(ctx, memberKey(pu, userID))
	if err != nil {
		return nil, err
	}
	if mi == nil {
		return nil, domain.Errorf(domain.ENOTFOUND, "user %s is not a member of the project", domain.Clip(userID))
	}
	tasks, at, err := s.tasksAssignedIn(ctx, p.ID, userID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	unassign := func(t *txn, old *domain.Task) {
		task := *old
		task.AssigneeID = nil
		task.UpdatedAt = now
		task.Version++
		e := s.logChange(t, task.ID, at[task.ID], nil)
		t.put(s.table, withEntry(taskToItem(&task), e), taskAt(old.Version, old.CommentCount), errRetry)
		s.putTagLinks(t, old, &task)
	}
	// More tasks than one transaction holds: unassign all but the last batch
	// first. Each batch is atomic (and takes its positions of the project's
	// change log); repeating them is harmless.
	seq := p.Seq
	for writes(tasks) > unassignBatch {
		n := 0
		for w := 0; n < len(tasks) && w+writes(tasks[n:n+1]) <= unassignBatch; n++ {
			w += writes(tasks[n : n+1])
		}
		batch := tasks[:n]
		var to int64
		err := s.commitIndexed(ctx, func(t *txn) error {
			t.logTo(pu, seq, now)
			t.onProject(pu, how.guard, nil, errProjectNotFound)
			for _, task := range batch {
				unassign(t, task)
			}
			to = t.log.to()
			return nil
		})
		if err != nil {
			return nil, err
		}
		seq = to
		tasks = tasks[n:]
	}
	err = s.commitIndexed(ctx, func(t *txn) error {
		t.logTo(pu, seq, now)
		t.logProject() // its members changed
		t.onProject(pu, how.guard, nil, errProjectNotFound)
		t.del(s.table, memberKey(pu, userID), ptr(expression.Name("assignSeq").Equal(expression.Value(numberOf(mi, "assignSeq")))), errRetry)
		s.dropCopy(t, userID, p.ID)
		joined := parseTime(str(mi, "joinedAt"))
		gone := s.logGone(t, userID, entryOf(mi), nil, &joined)
		s.logDeparture(t, userID, gone.pos)
		for _, task := range tasks {
			unassign(t, task)
		}
		t.result, t.project = p.ID, p.ID
		// One event for the whole removal, in the transaction that deletes the
		// membership; the tasks it unassigns yield none of their own.
		t.event = changeEvent(domain.EventMemberRemoved, p.ID, userID, viewer, now, nil, nil, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// tasksAssignedIn reads the tasks of project projectID assigned to user
// (GSI2, their open and done tasks), each once, with where their entries
// stand in the change log.
func (s *Store) tasksAssignedIn(ctx context.Context, projectID, user string) ([]*domain.Task, map[string]entryAt, error) {
	var tasks []*domain.Task
	at := map[string]entryAt{} // task id → its entry
	for _, open := range []bool{true, false} {
		items, err := s.queryAll(ctx, tasksOfAssignee, assignedPK(user, open))
		if err != nil {
			return nil, nil, err
		}
		for _, it := range items {
			if str(it, "projectId") != projectID {
				continue
			}
			t, err := decodeAs[*domain.Task](it)
			if err != nil {
				return nil, nil, err
			}
			// A task whose status moved between the two reads is in both:
			// written once (its version's condition then retries).
			if _, dup := at[t.ID]; !dup {
				tasks = append(tasks, t)
				at[t.ID] = entryOf(it)
			}
		}
	}
	return tasks, at, nil
}

// writes is how many items unassigning the tasks writes at most: each task,
// its tag links and, for each tag, the tag index (fewer when tasks share a
// tag: one update per index), and its change log entry, moved (two).
func writes(tasks []*domain.Task) int {
	n := 0
	for _, t := range tasks {
		n += 3 + 2*len(t.Tags)
	}
	return n
}

// memberGuard adds to t the write-time guard of policy.SeesProject: the
// viewer's membership item, written and removed by the same transactions
// as the copy on their profile that the rule read, still exists when t
// commits (onFail otherwise).
func (s *Store) memberGuard(t *txn, pu, viewer string, onFail error) {
	t.check(s.table, memberKey(pu, viewer), exists(), onFail)
}

// memberChecks adds the viewer's guard (memberGuard) and, when a task is
// being assigned to someone, the assignee's (assigneeGuard: policy.MayAssign
// answers its failure); for an assignee who is the viewer, the one action
// on their membership item is both (one action per item).
func (s *Store) memberChecks(t *txn, pu, viewer string, assignee *string) {
	switch {
	case assignee == nil:
		s.memberGuard(t, pu, viewer, errProjectNotFound)
	case *assignee == viewer:
		s.assigneeGuard(t, pu, viewer, errProjectNotFound)
	default:
		s.memberGuard(t, pu, viewer, errProjectNotFound)
		s.assigneeGuard(t, pu, *assignee, policy.MayAssign(assignee, nil))
	}
}

// assigneeGuard adds to t the write-time guard of policy.MayAssign (only
// a member is assigned a task): the assignee's membership item still
// exists when t commits (onFail otherwise: the rule's answer to no
// membership), its assignSeq bumped so that a concurrent removal of the
// member notices the assignment (removeOnce's condition on it).
func (s *Store) assigneeGuard(t *txn, pu, assignee string, onFail error) {
	bump := expression.Add(expression.Name("assignSeq"), expression.Value(1))
	t.update(s.table, memberKey(pu, assignee), bump, ptr(exists()), onFail)
}
