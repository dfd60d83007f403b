package policy

import (
	"slices"
	"strings"
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
	read := LogsRead{"p1": 7}
	for _, c := range []struct {
		name    string
		project string
		began   int64
		want    bool
	}{
		{"began before the read", "p1", 3, true},
		{"began at the read's last position", "p1", 7, true},
		{"began after the read", "p1", 8, false},
		{"not read (0)", "p1", 0, false},
		{"of a project the page does not vouch for", "p2", 3, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := Membership{ProjectID: c.project, UserID: "bob", Began: c.began}
			if got := MembershipBegunBy(m, read); got != c.want {
				t.Errorf("MembershipBegunBy(%+v, %v) = %v, want %v", m, read, got, c.want)
			}
		})
	}
}

func TestASyncKeepsAUserThroughAMembershipBegunByItsRead(t *testing.T) {
	read := LogsRead{"p1": 7, "p2": 4}
	for _, c := range []struct {
		name   string
		userID string
		ms     []Membership
		want   bool
	}{
		{"the viewer, with nothing read", "ann", nil, true},
		{"one membership begun by the read", "bob", []Membership{{"p1", "bob", 9}, {"p2", "bob", 4}}, true},
		{"every membership begun after", "bob", []Membership{{"p1", "bob", 8}, {"p2", "bob", 5}}, false},
		{"none read", "bob", nil, false},
		{"another user's membership", "bob", []Membership{{"p1", "cid", 3}}, false},
		{"a project the page does not vouch for", "bob", []Membership{{"p3", "bob", 1}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := SyncKeepsUser("ann", c.userID, read, c.ms); got != c.want {
				t.Errorf("SyncKeepsUser = %v, want %v", got, c.want)
			}
		})
	}
}

func TestALeaverIsToldOfWhatWasMadeWhileTheyCouldSeeIt(t *testing.T) {
	for _, c := range []struct {
		name       string
		born, left int64
		want       bool
	}{
		{"made before they left", 3, 7, true},
		{"made by the removal's own change", 7, 7, true},
		{"made after they left", 8, 7, false},
		{"the project deleted while they were in it", 99, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := KnownBeforeLeaving(c.born, c.left); got != c.want {
				t.Errorf("KnownBeforeLeaving(%d, %d) = %v, want %v", c.born, c.left, got, c.want)
			}
		})
	}
}

func TestAProjectIsSeenByTheMembersItsMembershipItemsList(t *testing.T) {
	p := &domain.Project{ID: "p1"}
	for _, c := range []struct {
		name string
		p    *domain.Project
		m    *Membership
		want bool
	}{
		{"a member", p, &Membership{ProjectID: "p1", UserID: "ann"}, true},
		{"no membership", p, nil, false},
		{"a project deleted", nil, &Membership{ProjectID: "p1", UserID: "ann"}, false},
		{"a membership of another project", p, &Membership{ProjectID: "p2", UserID: "ann"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := MemberSees(c.p, c.m); got != c.want {
				t.Errorf("MemberSees = %v, want %v", got, c.want)
			}
			// The same rule as the profile's copies answer it.
			var viewer *domain.User
			if c.p != nil && c.m != nil {
				viewer = profile(c.m.UserID, c.m.ProjectID)
			}
			if SeesProject(viewer, "p1") != c.want {
				t.Errorf("SeesProject of the same facts as a profile's copies = %v, want %v", !c.want, c.want)
			}
		})
	}
}

func TestOnlyAMemberIsAssignedATask(t *testing.T) {
	ann, bob := "ann", "bob"
	for _, c := range []struct {
		name     string
		assignee *string
		m        *Membership
		wantErr  bool
	}{
		{"unassigned", nil, nil, false},
		{"a member", &ann, &Membership{ProjectID: "p1", UserID: "ann"}, false},
		{"no member", &ann, nil, true},
		{"another user's membership", &bob, &Membership{ProjectID: "p1", UserID: "ann"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := MayAssign(c.assignee, c.m)
			if c.wantErr != (err != nil) || err != nil && (domain.ErrorCode(err) != domain.EINVALID || !strings.HasPrefix(domain.ErrorMessage(err), "assigneeId:")) {
				t.Errorf("MayAssign = %v, want an error %v (EINVALID, naming assigneeId)", err, c.wantErr)
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

func TestATaskIsDeletedByAnyMember(t *testing.T) {
	p := &domain.Project{ID: "p1", OwnerID: "ann"}
	bob := "bob"
	for _, c := range []struct {
		name, viewer string
		assignee     *string
		asOwner      bool
		code, msg    string
	}{
		{"the owner, of an unassigned task", "ann", nil, false, "", ""},
		{"a member, of an unassigned task", "cid", nil, false, "", ""},
		{"the assignee", "bob", &bob, false, "", ""},
		{"the owner, of an assigned task", "ann", &bob, false, "", ""},
		{"another member, of an assigned task", "cid", &bob, false, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			asOwner, err := MayDeleteTask(c.viewer, &domain.Task{ID: "t1", ProjectID: p.ID, AssigneeID: c.assignee}, p)
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
