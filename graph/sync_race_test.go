package graph_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// readsKey reports whether a GetItem or BatchGetItem input reads the item
// with keys pk, sk.
func readsKey(in any, pk, sk string) bool {
	is := func(k map[string]types.AttributeValue) bool {
		p, _ := k["PK"].(*types.AttributeValueMemberS)
		s, _ := k["SK"].(*types.AttributeValueMemberS)
		return p != nil && s != nil && p.Value == pk && s.Value == sk
	}
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		return is(in.Key)
	case *dynamodb.BatchGetItemInput:
		for _, ka := range in.RequestItems {
			for _, k := range ka.Keys {
				if is(k) {
					return true
				}
			}
		}
	}
	return false
}

// A user who may have stopped being visible (a removal in a project the
// viewer sees) is kept only through a project the sync follows, and a
// membership of theirs there that began by the position the page reads
// that project's log up to. In each case, dave's sync weighs alice and,
// between the sync's read of dave's profile and its read of alice's, a
// membership changes so that what the two profiles say they share would
// mislead: kept for good where she is gone, or dropped for good where she
// is not. (TestSyncProperty met the first three about once in 30 runs
// under load.)
func TestSyncWeighsAUserByMembershipsBegunBeforeItsRead(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// before weighs alice beforehand (default: bob removes her from
		// Mobile app); meanwhile runs between the two reads; after, before
		// the sync that follows. keeps says whether dave sees her at the
		// end.
		before, meanwhile, after []memberStep
		keeps                    bool
	}{{
		// By the profile read before, they would share Research, and
		// Research's departure passes over alice: she joined after dave
		// left.
		name:      "a project the viewer left before the user joined it",
		meanwhile: []memberStep{{"carol", "Research", "-dave"}, {"carol", "Research", "+alice"}},
	}, {
		// By the viewer's profile read again, they share Website
		// relaunch, which dave joined after the sync listed his projects:
		// the sync does not follow it yet, and once it is deleted, never
		// will.
		name:      "a project the viewer joined after the sync listed them",
		meanwhile: []memberStep{{"alice", "Website relaunch", "+dave"}},
		after:     []memberStep{{"alice", "Website relaunch", "delete"}},
	}, {
		// alice comes and goes in Research; while dave's sync weighs her,
		// bob takes dave out of Mobile app, their one other project, and
		// puts him back after. By the viewer's profile read again, she
		// is gone, and nothing would bring her back (dave's read of Mobile
		// app goes on where it was); her membership of Mobile app, begun
		// long before the page's read, keeps her.
		name:      "a followed project the viewer was out of for a moment",
		before:    []memberStep{{"carol", "Research", "+alice"}, {"carol", "Research", "-alice"}},
		meanwhile: []memberStep{{"bob", "Mobile app", "-dave"}},
		after:     []memberStep{{"bob", "Mobile app", "+dave"}},
		keeps:     true,
	}, {
		// Research lists them both after as before, but alice joined it
		// while dave was out for a moment; then it is deleted: its leave
		// judges by dave's departure, which alice's membership began
		// after, so only a weighing that counts memberships begun by the
		// page's read tombstones her.
		name:      "a followed project the viewer left and rejoined while the user joined it, then deleted",
		meanwhile: []memberStep{{"carol", "Research", "-dave"}, {"carol", "Research", "+alice"}, {"carol", "Research", "+dave"}},
		after:     []memberStep{{"carol", "Research", "delete"}},
	}} {
		for _, marks := range []bool{false, true} { // and with every sync marking (dynamo.Store.MarkEverySync)
			t.Run(tc.name+map[bool]string{true: " (marked)"}[marks], func(t *testing.T) {
				var armed atomic.Bool
				var fire func()
				alicePK, aliceSK := dynamo.UserItemKey("alice")
				e := faultEnv(t, faultAt("call", func(op string, in any) error {
					if readsKey(in, alicePK, aliceSK) && armed.CompareAndSwap(true, false) {
						fire()
					}
					return nil
				}))
				if _, err := e.Store.EnsureTable(ctx); err != nil { // the change log's epoch, as a start reads it
					t.Fatal(err)
				}
				clock := &testClock{t: time.Now()}
				e.Store.Now = clock.Now
				e.Store.MarkEverySync = marks
				e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Store: e.Store, Now: clock.Now}})
				s := e.Seed(t)
				dave := newReplica("dave")
				dave.sync(t, e, 100)
				if _, ok := dave.objs["alice"]; !ok {
					t.Fatal("dave's replica lacks alice, with whom he shares Mobile app")
				}
				before := tc.before
				if before == nil {
					before = []memberStep{{"bob", "Mobile app", "-alice"}}
				}
				applySteps(t, e, s, before)
				fired := false
				fire = func() { fired = true; applySteps(t, e, s, tc.meanwhile) }
				armed.Store(true)
				dave.sync(t, e, 100)
				if !fired {
					t.Fatal("no read of alice's profile in dave's sync: the race was not set up")
				}
				applySteps(t, e, s, tc.after)
				dave.sync(t, e, 100)
				if _, ok := dave.objs["alice"]; ok != tc.keeps {
					t.Errorf("dave's replica has alice: %v, want %v", ok, tc.keeps)
				}
				dave.mustEqualFullRead(t, e)
			})
		}
	}
}

// memberStep is one change a project's owner makes, by the seeded
// project's name: "+user" adds a member, "-user" removes one, "delete"
// deletes the project.
type memberStep struct{ by, project, op string }

// applySteps makes the changes in turn, straight on the store (not through
// the handler, whose reads the tests watch).
func applySteps(t *testing.T, e *testenv.Env, s *testenv.Seed, steps []memberStep) {
	t.Helper()
	ctx := context.Background()
	for _, st := range steps {
		p := s.Project(st.project).ID
		var err error
		switch {
		case st.op == "delete":
			err = e.Store.DeleteProject(ctx, st.by, p)
		case st.op[0] == '+':
			_, err = e.Store.AddProjectMember(ctx, st.by, p, st.op[1:])
		default:
			_, err = e.Store.RemoveProjectMember(ctx, st.by, p, st.op[1:])
		}
		if err != nil {
			t.Errorf("%s on %s by %s: %v", st.op, st.project, st.by, err)
		}
	}
}
