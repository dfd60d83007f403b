package dynamo

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
)

func TestGetRetriesUnprocessedKeys(t *testing.T) {
	ts := newTestStore(t)
	bd := makeBigDataset(ts)
	ts.mustImport(t, bd.d)

	var mu sync.Mutex
	asked := map[string]int{}
	leftOut := map[string]bool{}
	ts.emulateUnprocessed(t, func(n int, key map[string]string) bool {
		mu.Lock()
		defer mu.Unlock()
		k := rawKey(key)
		asked[k]++
		if asked[k] == 1 && n%3 == 0 {
			leftOut[k] = true
			return true
		}
		return false
	})

	vals, errs := ts.Get(context.Background(), bd.existing)
	t.Run("every item is returned correctly", func(t *testing.T) {
		for i, r := range bd.existing {
			checkGot(t, i, r, vals[i], errs[i], bd.want[r])
		}
	})
	t.Run("only the unprocessed keys are asked again", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		if len(leftOut) == 0 {
			t.Fatal("the emulation left no key unprocessed")
		}
		for _, r := range bd.existing {
			k := refKey(t, r)
			want := 1
			if leftOut[k] {
				want = 2
			}
			if asked[k] != want {
				t.Errorf("key %s asked %d times, want %d (left out the first time: %v)", k, asked[k], want, leftOut[k])
			}
		}
	})
	t.Run("one retry call per chunk", func(t *testing.T) {
		// 175 keys: two chunks, each with unprocessed keys, each retried once.
		if got := ts.calls.Get("BatchGetItem"); got != 4 {
			t.Errorf("BatchGetItem calls = %d, want 4 (%s)", got, ts.calls)
		}
	})
}

func TestGetKeysUnprocessedForever(t *testing.T) {
	ts := newTestStore(t)
	bd := makeBigDataset(ts)
	ts.mustImport(t, bd.d)
	refs := bd.existing[:12]
	stuck := map[string]bool{refKey(t, refs[2]): true, refKey(t, refs[7]): true, refKey(t, refs[11]): true}
	ts.emulateUnprocessed(t, func(_ int, key map[string]string) bool {
		return stuck[rawKey(key)]
	})

	start := time.Now()
	vals, errs := ts.Get(context.Background(), refs)
	t.Logf("Get gave up after %v and %d BatchGetItem calls", time.Since(start), ts.calls.Get("BatchGetItem"))

	t.Run("stuck keys are EUNAVAILABLE with no value", func(t *testing.T) {
		for i, r := range refs {
			if stuck[refKey(t, r)] {
				wantCode(t, fmt.Sprintf("ref %d %+v", i, r), errs[i], domain.EUNAVAILABLE)
				if vals[i] != nil {
					t.Errorf("ref %d %+v: value %s for a key never read", i, r, show(vals[i]))
				}
			}
		}
	})
	t.Run("other refs are right or EUNAVAILABLE, never wrong or silently nil", func(t *testing.T) {
		for i, r := range refs {
			if stuck[refKey(t, r)] {
				continue
			}
			if errs[i] != nil {
				wantCode(t, fmt.Sprintf("ref %d %+v", i, r), errs[i], domain.EUNAVAILABLE)
				if vals[i] != nil {
					t.Errorf("ref %d: both a value and an error", i)
				}
				continue
			}
			checkGot(t, i, r, vals[i], errs[i], bd.want[r])
		}
	})
	t.Run("it retries a bounded number of times", func(t *testing.T) {
		if got := ts.calls.Get("BatchGetItem"); got != 1+batchRetries {
			t.Errorf("BatchGetItem calls = %d, want %d", got, 1+batchRetries)
		}
	})
	t.Run("a cancelled context ends the retries at once", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ts.calls.Reset()
		_, errs := ts.Get(ctx, refs[2:3])
		if code := domain.ErrorCode(errs[0]); code != domain.EUNAVAILABLE && code != domain.EINTERNAL {
			t.Errorf("error %v, want EUNAVAILABLE or EINTERNAL", errs[0])
		}
		if got := ts.calls.Get("BatchGetItem"); got > 1 {
			t.Errorf("BatchGetItem calls = %d after cancel, want at most 1", got)
		}
	})
}

func TestBatchWriteRetriesUnprocessedItems(t *testing.T) {
	ts := newTestStore(t)
	seen := map[string]bool{}
	var mu sync.Mutex
	// Every item is left unprocessed the first time it is sent.
	ts.emulateUnprocessed(t, func(_ int, key map[string]string) bool {
		mu.Lock()
		defer mu.Unlock()
		k := rawKey(key)
		first := !seen[k]
		seen[k] = true
		return first
	})
	d := ts.Demo(storeTestNow)
	if err := ts.Import(context.Background(), d); err != nil {
		t.Fatalf("import: %v", err)
	}
	ts.emb.Server.EmulateUnprocessedItems(ts.Table(), nil)
	refs := []Ref{UserRef("alice"), ProjectRef(d.Projects[0].ID), TaskRef(d.Tasks[len(d.Tasks)-1].ID), CommentRef(d.Comments[0].ID)}
	vals, errs := ts.Get(context.Background(), refs)
	for i := range refs {
		if errs[i] != nil || vals[i] == nil {
			t.Errorf("%v after an import with unprocessed items: %v", refs[i], errs[i])
		}
	}
	if n := ts.calls.Get("BatchWriteItem"); n < 2*((len(seen)+24)/25) {
		t.Errorf("%d BatchWriteItem calls for %d items sent twice each, want at least %d", n, len(seen), 2*((len(seen)+24)/25))
	}
}

func TestDrainRetriesWhileRoundsMakeProgress(t *testing.T) {
	noSleep := func(context.Context, int) bool { return true }
	for _, tc := range []struct {
		name   string
		keep   func(n int) int // of n requests sent, how many come back unprocessed
		ok     bool
		rounds int
	}{
		{"one request a round: 40 rounds, far past the stall limit", func(n int) int { return n - 1 }, true, 40},
		{"half a round", func(n int) int { return n / 2 }, true, 6},
		{"nothing ever processed: gives up after batchRetries rounds", func(n int) int { return n }, false, batchRetries},
		{"progress, then stalls: only the stalls count", func(n int) int {
			if n > 30 {
				return n - 1
			}
			return n
		}, false, 10 + batchRetries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := make([]int, 40)
			rounds := 0
			ok, err := drain(context.Background(), req, noSleep, func(_ context.Context, req []int) ([]int, error) {
				rounds++
				return req[:tc.keep(len(req))], nil
			})
			if err != nil || ok != tc.ok || rounds != tc.rounds {
				t.Fatalf("drain = %v, %v after %d rounds; want %v after %d", ok, err, rounds, tc.ok, tc.rounds)
			}
		})
	}
	t.Run("a wait that ends (deadline or cancel) ends it", func(t *testing.T) {
		ends := func(context.Context, int) bool { return false }
		ok, err := drain(context.Background(), []int{1, 2}, ends, func(_ context.Context, req []int) ([]int, error) { return req[1:], nil })
		if ok || err != nil {
			t.Fatalf("drain = %v, %v; want false, nil", ok, err)
		}
	})
}
