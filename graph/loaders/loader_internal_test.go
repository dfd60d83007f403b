package loaders

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestBatchTakesMoreKeysThanItsInputBuffer loads three times inputCapacity
// keys from one goroutine into one batch, with a window (flushed by hand)
// and with a dispatcher that holds a lock through each Load: every Load returns, the
// keys are read by one fetch, and each gets its own value. (The dispatcher
// hook here holds a lock through each Load and flushes at the first wait,
// as graph/dispatch does.)
func TestBatchTakesMoreKeysThanItsInputBuffer(t *testing.T) {
	for _, tc := range []struct {
		name string
		step bool
	}{{"window", false}, {"by level", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var batches [][]int
			fetch := func(_ context.Context, keys []int) []result[int] {
				mu.Lock()
				batches = append(batches, append([]int(nil), keys...))
				mu.Unlock()
				res := make([]result[int], len(keys))
				for i, k := range keys {
					res[i].val = k * 10
				}
				return res
			}
			var steps OperationDispatch
			if tc.step {
				steps = &heldSteps{}
			}
			l := newLoader(Config{Wait: time.Hour}, steps, "test", fetch)
			n := 3 * inputCapacity
			ths := make([]func() (int, error), n)
			for k := range n {
				ths[k] = l.Load(context.Background(), k)
			}
			if !tc.step {
				l.dl.Flush() // the window, an hour, would not end
			}
			for k, th := range ths {
				if v, err := th(); err != nil || v != k*10 {
					t.Fatalf("key %d: got %d, %v; want %d", k, v, err, k*10)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(batches) != 1 || len(batches[0]) != n {
				t.Fatalf("got batches of %v keys, want one of %d", lens(batches), n)
			}
		})
	}
}

// heldSteps is a dispatcher that holds its lock through each Load and
// flushes the open batch when its caller first waits.
type heldSteps struct {
	mu    sync.Mutex
	flush func()
	once  sync.Once
}

func (h *heldSteps) Field(ctx context.Context, next graphql.Resolver) (any, error) { return next(ctx) }
func (h *heldSteps) Loader(flush func()) LoaderDispatch                            { h.flush = flush; return h }
func (h *heldSteps) Prime(_ any, prime func())                                     { prime() }
func (h *heldSteps) Batch(ctx context.Context) context.Context                     { return ctx }
func (h *heldSteps) Read([]any)                                                    {}
func (h *heldSteps) Part(ctx context.Context, _ string, _ ast.SelectionSet, _ func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error)) (context.Context, func()) {
	return ctx, func() {}
}

func (h *heldSteps) Load(_ context.Context, _ any, load func()) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	load()
	return func() {
		h.once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.flush()
		})
	}
}

func lens(batches [][]int) []int {
	out := make([]int, len(batches))
	for i, b := range batches {
		out[i] = len(b)
	}
	return out
}

// TestViewsShareTheListsThatDoNotDependOnTheViewer makes loaders on their
// first use from an event's view and from the loaders it was made from: the
// lists that do not depend on the viewer are one loader for both (one read
// per event), those filtered by the viewer's memberships one per viewer, and
// concurrent first uses make one loader.
func TestViewsShareTheListsThatDoNotDependOnTheViewer(t *testing.T) {
	l := New(Deps{}, "", Config{})
	v := l.ForViewer("viewer")
	if v.objects != l.objects {
		t.Error("a view has a batch of point reads of its own")
	}
	for _, r := range rows {
		name, own := r.about()
		if shared := r.loaderOf(v) == r.loaderOf(l); shared == own {
			t.Errorf("%s: shared by a view %v, filtered by the viewer's memberships %v", name, shared, own)
		}
	}
	if _, own := TasksOfProject.about(); own {
		t.Error("tasksOfProject is its viewer's own: the check above could not fail on a shared list")
	}
	if _, own := AssignedTo.about(); !own {
		t.Error("assignedTo is shared: the check above could not fail on a viewer's own list")
	}
	fresh := New(Deps{}, "", Config{})
	views := []*Loaders{fresh, fresh.ForViewer("a"), fresh.ForViewer("b")}
	got := make([]*loader[pageKey, *domain.Conn[*domain.Comment]], 30)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = CommentsOf.loader(views[i%len(views)]) })
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] || g.name != "commentsOf" {
			t.Fatalf("concurrent first uses got loaders %p (%q) and %p", g, g.name, got[0])
		}
	}
}
