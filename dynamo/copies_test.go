package dynamo

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/policy"
)

// profileOf reads a user's profile strongly.
func profileOf(t *testing.T, ts *testStore, u string) *domain.User {
	t.Helper()
	vals, errs := ts.Get(context.Background(), []Ref{UserRef(u)})
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	return vals[0].(*domain.User)
}

// The profile's copies follow every change of a membership or a project
// in the change's own transaction, and updateProfile keeps them.
func TestProfileCopiesFollowMemberships(t *testing.T) {
	ts := newTestStore(t)
	ctx := context.Background()
	for _, u := range []string{"olga", "mia"} {
		if _, err := ts.UpdateProfile(ctx, u, domain.ProfileInput{Name: u}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := ts.CreateProject(ctx, "olga", domain.ProjectInput{Name: "First"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := ts.CreateProject(ctx, "olga", domain.ProjectInput{Name: "Second"})
	if err != nil {
		t.Fatal(err)
	}
	want := func(step, u string, w map[string]string) {
		t.Helper()
		if got := profileOf(t, ts, u).Projects; !maps.Equal(got, w) {
			t.Errorf("%s: %s's copies %v, want %v", step, u, got, w)
		}
	}
	want("created", "olga", map[string]string{p.ID: "First", q.ID: "Second"})
	if _, err := ts.AddProjectMember(ctx, "olga", p.ID, "mia"); err != nil {
		t.Fatal(err)
	}
	want("added", "mia", map[string]string{p.ID: "First"})
	if !policy.SeesProject(profileOf(t, ts, "mia"), p.ID) || policy.SeesProject(profileOf(t, ts, "mia"), q.ID) {
		t.Error("the rule disagrees with the copies")
	}
	if _, err := ts.UpdateProfile(ctx, "mia", domain.ProfileInput{Name: "Mia M."}); err != nil {
		t.Fatal(err)
	}
	want("profile updated", "mia", map[string]string{p.ID: "First"})
	name := "Renamed"
	if _, err := ts.UpdateProject(ctx, "olga", ProjectPatch{ID: p.ID, Name: domain.Opt[*string]{Set: true, Value: &name}}); err != nil {
		t.Fatal(err)
	}
	want("renamed", "mia", map[string]string{p.ID: "Renamed"})
	want("renamed", "olga", map[string]string{p.ID: "Renamed", q.ID: "Second"})
	if _, err := ts.RemoveProjectMember(ctx, "olga", p.ID, "mia"); err != nil {
		t.Fatal(err)
	}
	want("removed", "mia", map[string]string{})
	if err := ts.DeleteProject(ctx, "olga", q.ID); err != nil {
		t.Fatal(err)
	}
	want("deleted", "olga", map[string]string{p.ID: "Renamed"})
}

// A project has at most MaxMembers members, so that a rename or deletion,
// which writes every member's copy, fits in one transaction (100
// actions): the next is refused with EINVALID, and a rename and deletion
// at the bound commit.
func TestMembersAreBoundedSoRenamesAndDeletionsFitOneTransaction(t *testing.T) {
	ts := newTestStore(t)
	ctx := context.Background()
	if _, err := ts.UpdateProfile(ctx, "olga", domain.ProfileInput{Name: "Olga"}); err != nil {
		t.Fatal(err)
	}
	p, err := ts.CreateProject(ctx, "olga", domain.ProjectInput{Name: "Big"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range MaxMembers { // MaxMembers-1 members besides the owner, then one too many
		u := fmt.Sprintf("m%03d", i)
		if _, err := ts.UpdateProfile(ctx, u, domain.ProfileInput{Name: u}); err != nil {
			t.Fatal(err)
		}
		_, err := ts.AddProjectMember(ctx, "olga", p.ID, u)
		switch {
		case i < MaxMembers-1 && err != nil:
			t.Fatalf("member %d: %v", i+2, err)
		case i == MaxMembers-1 && domain.ErrorCode(err) != domain.EINVALID:
			t.Fatalf("member %d: %v, want EINVALID", i+2, err)
		}
	}
	name := "Bigger"
	if _, err := ts.UpdateProject(ctx, "olga", ProjectPatch{ID: p.ID, Name: domain.Opt[*string]{Set: true, Value: &name}}); err != nil {
		t.Fatalf("renaming a project of %d members: %v", MaxMembers, err)
	}
	if got := profileOf(t, ts, "m088").Projects[p.ID]; got != name {
		t.Errorf("the last member's copy says %q, want %q", got, name)
	}
	if err := ts.DeleteProject(ctx, "olga", p.ID); err != nil {
		t.Fatalf("deleting a project of %d members: %v", MaxMembers, err)
	}
	if got := profileOf(t, ts, "m088").Projects; len(got) != 0 {
		t.Errorf("after the deletion the last member's copies are %v", got)
	}
}

// A table written before the copies (profiles without their map of
// projects, no marker) gets them once, from its memberships, when the
// table is ensured: each profile then lists exactly its projects.
func TestEnsureCopiesGivesExistingProfilesTheirProjects(t *testing.T) {
	ts := newTestStore(t)
	ctx := context.Background()
	b := ts.NewDataset(storeTestNow)
	olga, mia := b.User("olga", "Olga", ""), b.User("mia", "Mia", "")
	p := b.Project("P", "", olga, mia)
	q := b.Project("Q", "", olga)
	ts.mustImport(t, &b.D)
	for _, u := range []string{"olga", "mia"} {
		if _, err := ts.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(ts.Table()), Key: userKey(u).av(),
			UpdateExpression: aws.String("REMOVE " + attrProjects)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ts.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(ts.Table()), Key: copiesKey.av()}); err != nil {
		t.Fatal(err)
	}
	if got := profileOf(t, ts, "mia").Projects; len(got) != 0 {
		t.Fatalf("the copies were not stripped: %v", got)
	}
	if _, err := ts.EnsureTable(ctx); err != nil { // runs EnsureCopies
		t.Fatal(err)
	}
	for u, want := range map[string]map[string]string{"olga": {p.ID: "P", q.ID: "Q"}, "mia": {p.ID: "P"}} {
		if got := profileOf(t, ts, u).Projects; !maps.Equal(got, want) {
			t.Errorf("%s's copies after the migration %v, want %v", u, got, want)
		}
	}
	if it, err := ts.getOne(ctx, copiesKey); err != nil || it == nil {
		t.Errorf("no marker after the migration: %v %v", it, err)
	}
}
