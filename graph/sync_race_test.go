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
// viewer sees) is weighed against the viewer's profile as read after
// theirs. Here, while dave's sync weighs alice (bob removed her from the
// one project they shared), carol removes dave from Research and adds
// alice to it, between the sync's read of dave's profile and its read of
// alice's: by the profile read before, they would share Research, no
// tombstone would come, and Research's departure would pass over alice
// (she joined after dave left), so dave's replica would keep her for
// good. (TestSyncProperty met this about once in 30 runs under load.)
func TestSyncWeighsAUserByTheViewersProfileReadAfterTheirs(t *testing.T) {
	var armed atomic.Bool
	var fire func()
	alicePK, aliceSK := dynamo.UserItemKey("alice")
	e := faultEnv(t, faultAt("call", func(op string, in any) error {
		if readsKey(in, alicePK, aliceSK) && armed.CompareAndSwap(true, false) {
			fire()
		}
		return nil
	}))
	ctx := context.Background()
	if _, err := e.Store.EnsureTable(ctx); err != nil { // the change log's epoch, as a start reads it
		t.Fatal(err)
	}
	clock := &testClock{t: time.Now()}
	e.Store.Now = clock.Now
	e.Handler = e.NewHandler(graph.Options{Store: e.Store, Now: clock.Now})
	s := e.Seed()
	mobile, research := s.Project("Mobile app").ID, s.Project("Research").ID
	dave := newReplica("dave")
	dave.sync(t, e, 100)
	if _, ok := dave.objs["alice"]; !ok {
		t.Fatal("dave's replica lacks alice, with whom he shares Mobile app")
	}
	if _, err := e.Store.RemoveProjectMember(ctx, "bob", mobile, "alice"); err != nil {
		t.Fatal(err)
	}
	fired := false
	fire = func() {
		fired = true
		if _, err := e.Store.RemoveProjectMember(ctx, "carol", research, "dave"); err != nil {
			t.Error(err)
		}
		if _, err := e.Store.AddProjectMember(ctx, "carol", research, "alice"); err != nil {
			t.Error(err)
		}
	}
	armed.Store(true)
	dave.sync(t, e, 100)
	if !fired {
		t.Fatal("no read of alice's profile in dave's sync: the race was not set up")
	}
	dave.sync(t, e, 100) // Research's departure
	if _, ok := dave.objs["alice"]; ok {
		t.Error("dave's replica keeps alice, whom he no longer shares a project with")
	}
	dave.mustEqualFullRead(t, e)
}
