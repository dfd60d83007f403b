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
// A test (oneplace_test.go) parses the server's Go files and fails when one
// outside policy/ and domain/ compares a project's OwnerID or a comment's
// AuthorID, or reads a profile's Projects by index: a copy of a rule.
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
)

// SeesProject reports whether the viewer, whose profile is viewer (nil:
// they have none), may see the project and everything under it: a project
// is visible to its members while it exists, which the profile's copies of
// its user's projects (domain.User.Projects) say in one read.
func SeesProject(viewer *domain.User, projectID string) bool {
	_, ok := ProjectSeen(viewer, projectID)
	return ok
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

// MembershipBegunBy reports whether a user's membership of a project,
// whose entry in the project's change log was born at position born (0:
// no membership), counts for a sync that read that log up to upTo: it
// began by that read. A sync keeps a user the viewer may have stopped
// seeing only through such a membership (SeesUser over the memberships
// that count; graph's stillSeen): one begun after the read may have begun
// after the viewer left, where the leave's tombstones never weigh it.
func MembershipBegunBy(born, upTo int64) bool {
	return born != 0 && born <= upTo
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

// FinalEvent reports whether ev is the last event of its project the
// viewer gets as a subscriber who may no longer see it: the project's
// deletion (delivered to every subscriber), or the viewer's own removal
// from it (delivered to them though they are no member any more). It
// shows the event's scalars only, and their subscription then ends.
func FinalEvent(viewerID string, ev *domain.Event) bool {
	return ev.Kind == domain.EventProjectDeleted || ev.Kind == domain.EventMemberRemoved && ev.SubjectID == viewerID
}
