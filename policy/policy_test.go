package policy

import (
	"slices"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
)

func profile(id string, projects ...string) *domain.User {
	u := &domain.User{ID: id, Projects: map[string]string{}}
	for _, p := range projects {
		u.Projects[p] = "name of " + p
	}
	return u
}

func TestAProjectIsSeenByTheMembersItsCopiesList(t *testing.T) {
	for _, c := range []struct {
		name    string
		viewer  *domain.User
		project string
		want    bool
	}{
		{"a member", profile("ann", "p1", "p2"), "p2", true},
		{"not a member", profile("ann", "p1"), "p2", false},
		{"no projects", profile("ann"), "p1", false},
		{"no profile", nil, "p1", false},
		{"a profile decoded without its map", &domain.User{ID: "ann"}, "p1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := SeesProject(c.viewer, c.project); got != c.want {
				t.Errorf("SeesProject = %v, want %v", got, c.want)
			}
			name, ok := ProjectSeen(c.viewer, c.project)
			if ok != c.want || ok && name != "name of "+c.project || !ok && name != "" {
				t.Errorf("ProjectSeen = %q, %v; want the copy's name and %v", name, ok, c.want)
			}
		})
	}
}

func TestTheProjectsSeenAreTheProjectsEachSeen(t *testing.T) {
	for _, c := range []struct {
		name   string
		viewer *domain.User
		want   []string
	}{
		{"a member of two", profile("ann", "p2", "p1"), []string{"p1", "p2"}},
		{"of none", profile("ann"), nil},
		{"no profile", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ProjectsSeen(c.viewer)
			if !slices.Equal(got, c.want) {
				t.Errorf("ProjectsSeen = %v, want %v", got, c.want)
			}
			for _, p := range got {
				if !SeesProject(c.viewer, p) {
					t.Errorf("%s listed, not seen", p)
				}
			}
		})
	}
}

func TestAUserIsSeenByThemselvesAndByWhoeverSeesOneOfTheirProjects(t *testing.T) {
	ann := profile("ann", "p1")
	for _, c := range []struct {
		name   string
		viewer *domain.User
		userID string
		user   *domain.User
		want   bool
	}{
		{"themselves", ann, "ann", ann, true},
		{"themselves without a profile", nil, "ann", nil, true},
		{"a member of a project they share", ann, "bob", profile("bob", "p1", "p9"), true},
		{"no project in common", ann, "bob", profile("bob", "p9"), false},
		{"a user without projects", ann, "bob", profile("bob"), false},
		{"a user without a profile", ann, "bob", nil, false},
		{"a viewer without a profile", nil, "bob", profile("bob", "p1"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := SeesUser("ann", c.viewer, c.userID, c.user); got != c.want {
				t.Errorf("SeesUser = %v, want %v", got, c.want)
			}
		})
	}
}

func TestAMembershipCountsForASyncWhenItBeganByItsRead(t *testing.T) {
	for _, c := range []struct {
		name       string
		born, upTo int64
		want       bool
	}{
		{"began before the read", 3, 7, true},
		{"began at the read's last position", 7, 7, true},
		{"began after the read", 8, 7, false},
		{"no membership", 0, 7, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := MembershipBegunBy(c.born, c.upTo); got != c.want {
				t.Errorf("MembershipBegunBy(%d, %d) = %v, want %v", c.born, c.upTo, got, c.want)
			}
		})
	}
}

func TestAnEmailIsSeenByItsUserOnly(t *testing.T) {
	for _, c := range []struct {
		name   string
		viewer string
		user   *domain.User
		want   bool
	}{
		{"their own", "ann", profile("ann"), true},
		{"someone else's", "ann", profile("bob"), false},
		{"no viewer", "", profile("bob"), false},
		{"no user", "ann", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := SeesEmail(c.viewer, c.user); got != c.want {
				t.Errorf("SeesEmail = %v, want %v", got, c.want)
			}
		})
	}
}

// wantErr checks err's code and message ("" code: no error).
func wantErr(t *testing.T, err error, code, msg string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
		return
	}
	if domain.ErrorCode(err) != code || domain.ErrorMessage(err) != msg {
		t.Fatalf("err = %v, want %s: %s", err, code, msg)
	}
}

const ownerOnly = "only the project's owner may do this"

func TestOnlyTheOwnerManagesAProject(t *testing.T) {
	p := &domain.Project{ID: "p1", OwnerID: "ann"}
	for _, c := range []struct {
		viewer, code, msg string
	}{
		{"ann", "", ""},
		{"bob", domain.EFORBIDDEN, ownerOnly},
		{"", domain.EFORBIDDEN, ownerOnly},
	} {
		t.Run(c.viewer, func(t *testing.T) { wantErr(t, MayManageProject(c.viewer, p), c.code, c.msg) })
	}
}

func TestTheOwnerRemovesAnyMemberButThemselves(t *testing.T) {
	p := &domain.Project{ID: "p1", OwnerID: "ann"}
	for _, c := range []struct {
		name, viewer, user, code, msg string
	}{
		{"the owner removes a member", "ann", "bob", "", ""},
		{"the owner removes themselves", "ann", "ann", domain.EINVALID, "userId: the project's owner cannot be removed"},
		{"a member removes another", "bob", "cid", domain.EFORBIDDEN, ownerOnly},
		{"a member removes themselves: pointed to leaveProject", "bob", "bob", domain.EFORBIDDEN,
			"only the project's owner may remove members; to leave the project yourself, use leaveProject"},
		{"a member removes the owner", "bob", "ann", domain.EFORBIDDEN, ownerOnly},
	} {
		t.Run(c.name, func(t *testing.T) { wantErr(t, MayRemoveMember(c.viewer, p, c.user), c.code, c.msg) })
	}
}

func TestAnyMemberButTheOwnerMayLeave(t *testing.T) {
	p := &domain.Project{ID: "p1", OwnerID: "ann"}
	for _, c := range []struct {
		name, viewer, code, msg string
	}{
		{"a member", "bob", "", ""},
		{"the owner", "ann", domain.EINVALID, "projectId: the project's owner cannot leave it; delete the project instead"},
	} {
		t.Run(c.name, func(t *testing.T) { wantErr(t, MayLeave(c.viewer, p), c.code, c.msg) })
	}
}

func TestACommentIsDeletedByItsAuthorOrByTheProjectsOwner(t *testing.T) {
	p := &domain.Project{ID: "p1", OwnerID: "ann"}
	const notAuthor = "only the comment's author or the project's owner may delete it"
	for _, c := range []struct {
		name, author, viewer string
		asOwner              bool
		code, msg            string
	}{
		{"its author", "bob", "bob", false, "", ""},
		{"the owner, of another's comment", "bob", "ann", true, "", ""},
		{"the owner, of their own comment: as its author", "ann", "ann", false, "", ""},
		{"another member", "bob", "cid", false, domain.EFORBIDDEN, notAuthor},
	} {
		t.Run(c.name, func(t *testing.T) {
			asOwner, err := MayDeleteComment(c.viewer, &domain.Comment{ID: "c1", AuthorID: c.author}, p)
			wantErr(t, err, c.code, c.msg)
			if asOwner != c.asOwner {
				t.Errorf("asOwner = %v, want %v", asOwner, c.asOwner)
			}
		})
	}
}

func TestTheFinalEventsAreTheDeletionAndTheViewersOwnRemoval(t *testing.T) {
	for _, c := range []struct {
		name    string
		kind    domain.EventKind
		subject string
		want    bool
	}{
		{"the project's deletion", domain.EventProjectDeleted, "p1", true},
		{"the viewer's removal", domain.EventMemberRemoved, "ann", true},
		{"another's removal", domain.EventMemberRemoved, "bob", false},
		{"the viewer's adding", domain.EventMemberAdded, "ann", false},
		{"a task's change", domain.EventTaskUpdated, "t1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := FinalEvent("ann", &domain.Event{Kind: c.kind, ProjectID: "p1", SubjectID: c.subject}); got != c.want {
				t.Errorf("FinalEvent = %v, want %v", got, c.want)
			}
		})
	}
}
