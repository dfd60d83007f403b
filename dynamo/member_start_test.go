package dynamo

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
)

// The live replay (live.Subscription) starts a viewer's history at their
// membership's joinedAt, compared with the events' At: the two must be
// the very same clock value for the membership's own event to be the
// first the viewer may replay.
func TestAMembershipStartsAtTheTimeOfItsOwnEvent(t *testing.T) {
	f := newOutboxFixture(t, true)
	var tick atomic.Int64
	f.ts.Now = func() time.Time { return storeTestNow.Add(time.Duration(tick.Add(int64(time.Millisecond + 7)))) }
	ctx := context.Background()
	joined := func(user string) time.Time {
		t.Helper()
		vals, errs := f.ts.Get(ctx, []Ref{MemberRef(f.p.ID, user)})
		if errs[0] != nil {
			t.Fatalf("reading %s's membership: %v", user, errs[0])
		}
		return vals[0].(*domain.Member).JoinedAt
	}
	last := func() *domain.Event {
		t.Helper()
		_, got, _ := f.sink.snapshot()
		return got[len(got)-1]
	}
	if _, err := f.ts.AddProjectMember(ctx, "owner", f.p.ID, "outsider"); err != nil {
		t.Fatal(err)
	}
	first := joined("outsider")
	if ev := last(); ev.Kind != domain.EventMemberAdded || ev.SubjectID != "outsider" || !ev.At.Equal(first) {
		t.Fatalf("%s of %s at %s; the membership began at %s: want its MEMBER_ADDED at that very time",
			ev.Kind, ev.SubjectID, ev.At.Format(time.RFC3339Nano), first.Format(time.RFC3339Nano))
	}
	if _, err := f.ts.RemoveProjectMember(ctx, "owner", f.p.ID, "outsider"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ts.AddProjectMember(ctx, "owner", f.p.ID, "outsider"); err != nil {
		t.Fatal(err)
	}
	again := joined("outsider")
	if ev := last(); ev.Kind != domain.EventMemberAdded || !ev.At.Equal(again) || !again.After(first) {
		t.Errorf("added back: MEMBER_ADDED at %s, membership from %s (first %s); want the re-adding's time for both",
			ev.At.Format(time.RFC3339Nano), again.Format(time.RFC3339Nano), first.Format(time.RFC3339Nano))
	}
	p, err := f.ts.CreateProject(ctx, "owner", domain.ProjectInput{Name: "New"})
	if err != nil {
		t.Fatal(err)
	}
	vals, errs := f.ts.Get(ctx, []Ref{MemberRef(p.ID, "owner")})
	if errs[0] != nil || !vals[0].(*domain.Member).JoinedAt.Equal(p.CreatedAt) {
		t.Errorf("the owner's membership: %v, %v; want it to begin at the project's creation %s", vals[0], errs[0], p.CreatedAt)
	}
}
