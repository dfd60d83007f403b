package graph_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
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
		// meanwhile runs between the two reads; after, before the sync
		// that follows.
		meanwhile, after func(t *testing.T, e *testenv.Env, s *testenv.Seed)
		// before weighs alice beforehand (nil: bob's removal of her from
		// Mobile app); keeps says whether dave sees her at the end.
		before func(t *testing.T, e *testenv.Env, s *testenv.Seed)
		keeps  bool
	}{{
		// By the profile read before, they would share Research, and
		// Research's departure passes over alice: she joined after dave
		// left.
		name: "a project the viewer left before the user joined it",
		meanwhile: func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			research := s.Project("Research").ID
			if _, err := e.Store.RemoveProjectMember(ctx, "carol", research, "dave"); err != nil {
				t.Error(err)
			}
			if _, err := e.Store.AddProjectMember(ctx, "carol", research, "alice"); err != nil {
				t.Error(err)
			}
		},
	}, {
		// By the viewer's profile read again, they share Website
		// relaunch, which dave joined after the sync listed his projects:
		// the sync does not follow it yet, and once it is deleted, never
		// will.
		name: "a project the viewer joined after the sync listed them",
		meanwhile: func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			if _, err := e.Store.AddProjectMember(ctx, "alice", s.Project("Website relaunch").ID, "dave"); err != nil {
				t.Error(err)
			}
		},
		after: func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			if err := e.Store.DeleteProject(ctx, "alice", s.Project("Website relaunch").ID); err != nil {
				t.Error(err)
			}
		},
	}, {
		// alice comes and goes in Research; while dave's sync weighs her,
		// bob takes dave out of Mobile app, their one other project, and
		// puts him back after. By the viewer's profile read again, she
		// is gone, and nothing would bring her back (dave's read of Mobile
		// app goes on where it was); her membership of Mobile app, begun
		// long before the page's read, keeps her.
		name: "a followed project the viewer was out of for a moment",
		before: func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			research := s.Project("Research").ID
			if _, err := e.Store.AddProjectMember(ctx, "carol", research, "alice"); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Store.RemoveProjectMember(ctx, "carol", research, "alice"); err != nil {
				t.Fatal(err)
			}
		},
		meanwhile: func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			if _, err := e.Store.RemoveProjectMember(ctx, "bob", s.Project("Mobile app").ID, "dave"); err != nil {
				t.Error(err)
			}
		},
		after: func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			if _, err := e.Store.AddProjectMember(ctx, "bob", s.Project("Mobile app").ID, "dave"); err != nil {
				t.Error(err)
			}
		},
		keeps: true,
	}, {
		// Research lists them both after as before, but alice joined it
		// while dave was out for a moment; then it is deleted: its leave
		// judges by dave's departure, which alice's membership began
		// after, so only a weighing that counts memberships begun by the
		// page's read tombstones her.
		name: "a followed project the viewer left and rejoined while the user joined it, then deleted",
		meanwhile: func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			research := s.Project("Research").ID
			if _, err := e.Store.RemoveProjectMember(ctx, "carol", research, "dave"); err != nil {
				t.Error(err)
			}
			if _, err := e.Store.AddProjectMember(ctx, "carol", research, "alice"); err != nil {
				t.Error(err)
			}
			if _, err := e.Store.AddProjectMember(ctx, "carol", research, "dave"); err != nil {
				t.Error(err)
			}
		},
		after: func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			if err := e.Store.DeleteProject(ctx, "carol", s.Project("Research").ID); err != nil {
				t.Error(err)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
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
			e.Handler = e.NewHandler(graph.Options{Store: e.Store, Now: clock.Now})
			s := e.Seed(t)
			dave := newReplica("dave")
			dave.sync(t, e, 100)
			if _, ok := dave.objs["alice"]; !ok {
				t.Fatal("dave's replica lacks alice, with whom he shares Mobile app")
			}
			if tc.before != nil {
				tc.before(t, e, s)
			} else if _, err := e.Store.RemoveProjectMember(ctx, "bob", s.Project("Mobile app").ID, "alice"); err != nil {
				t.Fatal(err)
			}
			fired := false
			fire = func() { fired = true; tc.meanwhile(t, e, s) }
			armed.Store(true)
			dave.sync(t, e, 100)
			if !fired {
				t.Fatal("no read of alice's profile in dave's sync: the race was not set up")
			}
			if tc.after != nil {
				tc.after(t, e, s)
			}
			dave.sync(t, e, 100)
			if _, ok := dave.objs["alice"]; ok != tc.keeps {
				t.Errorf("dave's replica has alice: %v, want %v", ok, tc.keeps)
			}
			dave.mustEqualFullRead(t, e)
		})
	}
}
