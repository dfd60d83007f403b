// Package policy answers every "may this viewer see or do this" of
// taskgraph, each rule once, over the facts the store reads (domain types):
// the GraphQL loaders and lookups, the mutations and their idempotent
// replays in dynamo, the live hub and each event's re-check, and sync all
// call it. It reads nothing itself: the callers read the facts (a profile,
// a project, a comment) where and as they read them anyway, and a
// transaction that writes on the strength of a rule keeps the fact it read
// as its condition (dynamo's guards). Its errors carry the messages clients
// see.
//
// The facts are domain types (a profile with its copies of its user's
// projects, a project, a comment, an event) and, where no domain type
// holds one, policy's own (facts.go: a Membership with where it began,
// the LogsRead of a sync page): each as its caller reads it, never one
// made out of another.
//
// A test (oneplace_test.go) parses the server's Go files and fails when one
// outside policy/ and domain/ compares a project's OwnerID, a comment's
// AuthorID, a membership's Began or an object's Born, or reads a profile's
// Projects by index: a copy of a rule.
package policy

import (
	"maps"
	"slices"

	"github.com/taskgraph/taskgraph/domain"
)

var (
	errOwnerOnly  = domain.Errorf(domain.EFORBIDDEN, "only the project's owner may do this")
	errNotAuthor  = domain.Errorf(domain.EFORBIDDEN, "only the comment's author or the project's owner may delete it")
	errOwnerStays = domain.Errorf(domain.EINVALID, "userId: the project's owner cannot be removed")
	errLeaveSelf  = domain.Errorf(domain.EFORBIDDEN, "only the project's owner may remove members; to leave the project yourself, use leaveProject")
	errOwnerLeave = domain.Errorf(domain.EINVALID, "projectId: the project's owner cannot leave it; delete the project instead")
	errAssignee   = domain.Errorf(domain.EINVALID, "assigneeId: the assignee must be a member of the project")
)

// SeesProject reports whether the viewer, whose profile is viewer (nil:
// they have none), may see the project and everything under it: a project
// is visible to its members while it exists, which the profile's copies of
// its user's projects (domain.User.Projects) say in one read.
func SeesProject(viewer *domain.User, projectID string) bool {
	_, ok := ProjectSeen(viewer, projectID)
	return ok
}

// MemberSees is SeesProject read from other facts: the project (nil: it
// does not exist) and the user's membership item (nil: none), for many
// users of one project at once (the live hub's check of an event's
// recipients, dynamo.Store.Membership). A membership item and its copy on
// the user's profile are written and removed in the same transactions,
// and a project's deletion removes the copies with the project, so both
// facts answer alike.
func MemberSees(p *domain.Project, m *Membership) bool {
	return p != nil && m != nil && m.ProjectID == p.ID
}

// ProjectSeen is SeesProject with the project's name as the viewer's copy
// holds it (a task's project that selects only its id and name is answered
// from it, with no read of the project): "" for a name too long for a copy
// (the caller reads the project).
func ProjectSeen(viewer *domain.User, projectID string) (name string, ok bool) {
	if viewer == nil {
		return "", false
	}
	name, ok = viewer.Projects[projectID]
	return name, ok
}

// ProjectsSeen lists the projects the viewer, whose profile is viewer
// (nil: none), sees (SeesProject: each is visible to them), in the order
// of their ids: what a sync of theirs follows.
func ProjectsSeen(viewer *domain.User) []string {
	if viewer == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(viewer.Projects))
}

// SeesUser reports whether the viewer (viewerID, whose profile is viewer,
// nil when they have none) may see the user userID (whose profile is user,
// nil when they have none): themselves always; anyone else when their
// profile lists a project the viewer sees (SeesProject), so a pure
// function of the two profiles.
func SeesUser(viewerID string, viewer *domain.User, userID string, user *domain.User) bool {
	if userID == viewerID {
		return true
	}
	if user == nil {
		return false
	}
	for p := range user.Projects {
		if SeesProject(viewer, p) {
			return true
		}
	}
	return false
}

// MembershipBegunBy reports whether a user's membership m counts for a
// sync page that read its project's log (read): the page reads the
// project as visible and the membership began at or before the position
// it reads the log up to. Anything looser keeps a user for good: one who
// joined after the viewer left (their membership began past the
// departure, which a leave passes over), or shared through a project the
// token does not follow yet (joined after the page's read: no leave of it
// would ever weigh them).
func MembershipBegunBy(m Membership, read LogsRead) bool {
	upTo, ok := read[m.ProjectID]
	return ok && m.Began != 0 && m.Began <= upTo
}

// SyncKeepsUser reports whether a sync page of the viewer keeps the user
// userID, whom its entries say the viewer may have stopped seeing (a
// removed member, a member of a project left): themselves always; anyone
// else only through one of their memberships (ms, those read) that counts
// for the page (MembershipBegunBy): SeesUser over the projects the page
// vouches for. Then viewer and user were both members when the page read
// the viewer's profile, and any later loss is met by a later read of that
// project's log (docs/sync.md, "What a sync reads", 6).
func SyncKeepsUser(viewerID, userID string, read LogsRead, ms []Membership) bool {
	if userID == viewerID {
		return true
	}
	for _, m := range ms {
		if m.UserID == userID && MembershipBegunBy(m, read) {
			return true
		}
	}
	return false
}

// KnownBeforeLeaving reports whether a viewer removed from a project at
// position left of its change log (0: never removed; the project was
// deleted while they were in it) may be told that an object of it, born
// at position born, is gone: only what was made while they could see the
// project. What was made after they left they never saw, and its id is
// not theirs to learn (a sync's leave, docs/sync.md).
func KnownBeforeLeaving(born, left int64) bool {
	return left == 0 || born <= left
}

// MayAssign reports whether a task of a project may be assigned to
// assigneeID (nil: unassigned, always), whose membership of the project
// is m (nil: none): only to a member, else EINVALID. The store reads no
// membership for it: the write keeps the fact as its condition (dynamo's
// assigneeGuard: the membership item exists), and a failed condition is
// answered with MayAssign of no membership.
func MayAssign(assigneeID *string, m *Membership) error {
	if assigneeID == nil || m != nil && m.UserID == *assigneeID {
		return nil
	}
	return errAssignee
}

// SeesEmail reports whether the viewer may see u's email: their own only
// (to anyone else a user's email is null).
func SeesEmail(viewerID string, u *domain.User) bool {
	return u != nil && u.ID == viewerID
}

// MayManageProject reports whether the viewer, who sees p, may change it
// (update, delete, add and remove members): its owner only, else
// EFORBIDDEN. The write that follows keeps the owner it read as its
// condition (dynamo's ownerGuard).
func MayManageProject(viewerID string, p *domain.Project) error {
	if p.OwnerID != viewerID {
		return errOwnerOnly
	}
	return nil
}

// MayRemoveMember reports whether the viewer, who sees p, may remove the
// member userID from it with removeProjectMember: its owner may
// (MayManageProject) remove anyone but themselves, the owner (EINVALID: a
// project always has its owner); anyone else gets EFORBIDDEN, a member who
// names themselves with a pointer to leaveProject (MayLeave). The write
// that follows keeps the owner it read as its condition (ownerGuard).
func MayRemoveMember(viewerID string, p *domain.Project, userID string) error {
	if err := MayManageProject(viewerID, p); err != nil {
		if userID == viewerID {
			return errLeaveSelf
		}
		return err
	}
	if userID == p.OwnerID {
		return errOwnerStays
	}
	return nil
}

// MayLeave reports whether the viewer, a member who sees p, may leave it
// (leaveProject: removed as removeProjectMember removes, by themselves):
// any member may, but its owner (EINVALID: a project always has its
// owner, who deletes it instead). The write that follows keeps the owner
// it read as its condition (dynamo's notOwnerGuard), and the membership
// it removes as its own.
func MayLeave(viewerID string, p *domain.Project) error {
	if p.OwnerID == viewerID {
		return errOwnerLeave
	}
	return nil
}

// MayDeleteComment reports whether the viewer, who sees c and its project
// p, may delete c: its author may; else the project's owner may (asOwner:
// the right rests on the ownership, which the write then keeps as its
// condition, dynamo's ownerGuard); anyone else gets EFORBIDDEN.
func MayDeleteComment(viewerID string, c *domain.Comment, p *domain.Project) (asOwner bool, err error) {
	switch {
	case c.AuthorID == viewerID:
		return false, nil
	case p.OwnerID == viewerID:
		return true, nil
	}
	return false, errNotAuthor
}

// MayDeleteTask reports whether the viewer, a member who sees task t and
// its project p, may delete t: any member may. A rule that rests the right
// on the project's ownership returns asOwner (the write then keeps the
// owner it read as its condition, dynamo's ownerGuard); one that rests it
// on the task's fields needs no guard of its own: the delete's condition
// on the task's version keeps every field it read. Its callers are the
// store's delete and the tests that ask it which viewer may delete.
func MayDeleteTask(viewerID string, t *domain.Task, p *domain.Project) (asOwner bool, err error) {
	return false, nil
}

// FinalEvent reports whether ev is the last event of its project the
// viewer gets as a subscriber who may no longer see it: the project's
// deletion (delivered to every subscriber), or the viewer's own removal
// from it (delivered to them though they are no member any more). It
// shows the event's scalars only, and their subscription then ends.
func FinalEvent(viewerID string, ev *domain.Event) bool {
	return ev.Kind == domain.EventProjectDeleted || ev.Kind == domain.EventMemberRemoved && ev.SubjectID == viewerID
}
