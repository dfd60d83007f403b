// Package loaders holds the per-operation data loaders between the
// GraphQL resolvers and the store (after gqlgen's _examples/dataloader):
// made for each query or mutation by the operation pipeline (New, With),
// reached by the resolvers with For(ctx), one loader per access pattern,
// each named by it: objects (every point read) and the lists, one row
// each of the table in lists.go (ProjectsOfUser, TasksOfProject,
// CommentsOf, …), whose Load a resolver calls. The lists keep only what
// the viewer may see, asking package policy with the facts their batches
// read (visibility.go); the lookups by id answer null for what the viewer
// may not see (lookup.go); the lists under an object asked for by id are
// read with it (prefetch.go). Every read of one level of a query is one
// round trip.
package loaders

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/vektah/gqlparser/v2/ast"
)

// DefaultBatchWait is how long a loader without a dispatcher
// (Config.Dispatch nil: a benchmark's comparison) waits for more keys
// before it reads: every level pays it once, so it is kept as short as lets
// sibling resolvers (run concurrently by gqlgen) join the same batch on a
// machine that is not busy.
const DefaultBatchWait = time.Millisecond

// Config tunes the loaders. The operation pipeline sets Dispatch
// (pipeline.New); tests and benchmarks may set the rest.
type Config struct {
	// Dispatch, when set, reads an operation's batches level by level:
	// when all its running work waits on a loader (dispatch.go, package
	// graph/dispatch). Nil: by window (Wait).
	Dispatch Dispatcher
	// Wait is the batch window without Dispatch; 0 means
	// DefaultBatchWait. The pipeline leaves Dispatch nil when Wait is
	// set (the benchmarks' comparison of the two).
	Wait time.Duration
	// Gate, when set, holds every batch read until it opens (tests).
	Gate *ReadGate
	// NoBatch turns batching and caching off: every resolver reads on its
	// own, as a naive server would. For measuring the loaders' gain only.
	NoBatch bool
	// Detached, when set, is the context of every batch read instead of
	// the first asker's: loaders shared by a live event's recipients must
	// not fail for all when one recipient leaves.
	Detached context.Context
}

// Deps are what the loaders work with: the store, the clock, and what
// they ask the executor of the operation's selections.
type Deps struct {
	Store *dynamo.Store
	// Now is the clock (overdueTasks' asOf defaults to its today).
	Now func() time.Time
	// Lookahead returns the fields the current field selects; nil:
	// gqlgen's (its field context's selections). The executor's knows
	// the plan of a query with @defer.
	Lookahead func(ctx context.Context) []graphql.CollectedField
	// Defers reports whether a selection set defers a fragment below it
	// (@defer); nil: never. A list under one is not read ahead: a
	// deferred part must not be ready before the part it is in.
	Defers func(oc *graphql.OperationContext, set ast.SelectionSet) bool
}

// Loaders are the per-operation data loaders, one per access pattern. They
// are made for each query or mutation (by the operation pipeline, on every
// transport) and never shared between operations: their caches hold what
// one viewer may see.
type Loaders struct {
	deps   Deps
	store  *dynamo.Store // deps.Store
	viewer string
	cfg    Config
	// projectsAhead holds, per page of the viewer's projects, what to start
	// loading for each project as soon as its membership is listed.
	projectsAhead sync.Map // projectsKey → func(context.Context, []string)
	// tagAssignees holds the pages of tasksByTag whose nodes select their
	// assignee: fetchTasksByTag reads them with the visibility check.
	tagAssignees sync.Map // pageKey → struct{}
	// taskProjects holds the pages of a user's tasks (assigned, overdue)
	// whose nodes select their project: their visibility check reads the
	// projects in its batch (noteTaskProjects).
	taskProjects sync.Map // pageKey → struct{}
	// threads holds, per task whose comments are asked for, what its
	// item said of them (its project and comment count): fetchCommentsOf
	// reads the first comments of a project's tasks together when their
	// counts make it pay (dynamo.Store.CommentsOfTasks).
	threads sync.Map // task id → dynamo.CommentsAsk
	// commentsAhead holds, per page of a project's tasks whose nodes
	// select their comments, the comments' page arguments:
	// fetchTasksOfProject asks for every listed task's page at once, so
	// that a project's comment lists are one batch however its tasks'
	// resolvers are scheduled.
	commentsAhead sync.Map // projectTasksKey → pageArgs
	// profileAhead: me waits for the lists under it, whose visibility
	// checks read the viewer's profile in their batch.
	profileAhead atomic.Bool

	// levels is the operation's dispatch by level (Config.Dispatch), or
	// nil.
	levels OperationDispatch

	// objects batches every point read of a request (users, projects,
	// memberships, tasks, comments) into BatchGetItem calls.
	objects *loader[dynamo.Ref, any]
	// read is what the objects' reads found of the viewer's profile and of
	// projects (readlog.go).
	read readLog

	// origin is the Loaders this one shares the lists that do not depend
	// on the viewer with (itself, or the Loaders a view was made from:
	// ForViewer); lists holds the loaders of the lists, by their row's
	// slot (lists.go), each made on its first use: origin's for the lists
	// shared, this viewer's for those filtered by its memberships.
	origin *Loaders
	lists  []slot
}

// New makes the loaders of one operation of viewer.
func New(d Deps, viewer string, cfg Config) *Loaders {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Lookahead == nil {
		d.Lookahead = collected
	}
	if d.Defers == nil {
		d.Defers = func(*graphql.OperationContext, ast.SelectionSet) bool { return false }
	}
	l := &Loaders{deps: d, store: d.Store, viewer: viewer, cfg: cfg, lists: make([]slot, len(rows))}
	l.origin = l
	if cfg.Dispatch != nil && !cfg.NoBatch {
		l.levels = cfg.Dispatch.Operation()
	}
	l.objects = newLoader(cfg, l.levels, "objects", func(ctx context.Context, refs []dynamo.Ref) []result[any] {
		vals, errs := d.Store.Get(ctx, refs)
		res := make([]result[any], len(refs))
		for i := range refs {
			res[i] = result[any]{val: vals[i], err: errs[i]}
			if errs[i] == nil {
				l.note(refs[i], vals[i])
			}
		}
		return res
	})
	return l
}

// collected is gqlgen's lookahead: the fields the current field's
// selections collect.
func collected(ctx context.Context) []graphql.CollectedField {
	return graphql.CollectFields(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field.Selections, nil)
}

// ForViewer returns l's loaders as viewer sees them (a live event's, one
// view per recipient): the object and list caches that do not depend on
// who reads them are l's own (shared); the lists filtered by the viewer's
// memberships are the viewer's; all are dispatched with l's (one count for
// all the event's resolutions).
func (l *Loaders) ForViewer(viewer string) *Loaders {
	return &Loaders{deps: l.deps, store: l.store, viewer: viewer, cfg: l.cfg, objects: l.objects, origin: l.origin, levels: l.levels,
		lists: make([]slot, len(rows))}
}

// Store is the store the loaders read.
func (l *Loaders) Store() *dynamo.Store { return l.store }

// Viewer is the user whose operation the loaders serve ("" for a live
// event's shared loaders).
func (l *Loaders) Viewer() string { return l.viewer }

// Now is the time by the operation's clock (Deps.Now).
func (l *Loaders) Now() time.Time { return l.deps.Now() }

// Today is the date of the operation's clock: the default asOf of
// overdueTasks.
func (l *Loaders) Today() domain.Date { return domain.DateOf(l.Now()) }

type ctxKey struct{}

// With returns ctx carrying the operation's loaders (nil: none, as for a
// subscription, whose events read through loaders of their own).
func With(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// For returns the operation's loaders (With).
func For(ctx context.Context) *Loaders {
	return ctx.Value(ctxKey{}).(*Loaders)
}

// Of is For, nil when ctx carries no loaders.
func Of(ctx context.Context) *Loaders {
	l, _ := ctx.Value(ctxKey{}).(*Loaders)
	return l
}

// each makes a loader that de-duplicates keys and runs one fetch per
// distinct key, all at once: a level of a query is one round trip however
// wide it is. The fan-out is bounded by the query's cost limit, and the
// calls to DynamoDB by the client's connection limit (client.TuneHTTP). (A
// per-request bound would also need to let nested loads through, or a level
// whose fetches wait on another loader could starve.)
func each[K comparable, V any](l *Loaders, name string, fetch func(context.Context, K) (V, error)) *loader[K, V] {
	return newLoader(l.cfg, l.levels, name, func(ctx context.Context, keys []K) []result[V] {
		res := make([]result[V], len(keys))
		if len(keys) == 1 {
			v, err := fetch(ctx, keys[0])
			res[0] = result[V]{val: v, err: err}
			return res
		}
		done := dynamo.ForkOf(ctx)(len(keys))
		var wg sync.WaitGroup
		for i, k := range keys {
			wg.Add(1)
			client.Go(func() { // a pooled goroutine, its stack grown for DynamoDB calls
				defer wg.Done()
				defer done()
				v, err := fetch(ctx, k)
				res[i] = result[V]{val: v, err: err}
			})
		}
		wg.Wait()
		return res
	})
}
