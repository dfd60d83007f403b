package graph

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/policy"
)

// DefaultBatchWait is how long a loader waits for more keys before it
// reads. Every level of a query pays it once, so it is kept as short as lets
// sibling resolvers (run concurrently by gqlgen) join the same batch.
const DefaultBatchWait = time.Millisecond

// LoaderConfig tunes the loaders.
type LoaderConfig struct {
	// Wait is the batch window; 0 means DefaultBatchWait.
	Wait time.Duration
	// Steps, when set, replaces the window by step mode: an operation's
	// batches are read when all its running work waits on a loader (tests
	// that pin calls and round trips; stephook.go, internal/stepmode).
	Steps StepMode
	// Gate, when set, holds every batch read until it opens (tests).
	Gate *ReadGate
	// NoBatch turns batching and caching off: every resolver reads on its
	// own, as a naive server would. For measuring the loaders' gain only.
	NoBatch bool
	// detached, when set, is the context of every batch read instead of
	// the first asker's: loaders shared by an event's recipients
	// (live.go) must not fail for all when one recipient leaves.
	detached context.Context
}

// Loaders are the per-operation data loaders, one per access pattern. They
// are made for each query or mutation (by operationScope, on every
// transport) and never shared between operations: their caches hold what
// one viewer may see.
type Loaders struct {
	store  *dynamo.Store
	viewer string
	cfg    LoaderConfig
	now    func() time.Time // the handler's clock (Options.Now)
	// projectsAhead holds, per page of the viewer's projects, what to start
	// loading for each project as soon as its membership is listed.
	projectsAhead sync.Map // pageKey → func(context.Context, []string)
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

	// steps is the operation's step mode (LoaderConfig.Steps), or nil.
	steps OperationSteps

	// objects batches every point read of a request (users, projects,
	// memberships, tasks, comments) into BatchGetItem calls.
	objects *loader[dynamo.Ref, any]

	// The lists' loaders, each made on its first use (most operations use
	// one or two of them): those that do not depend on the viewer are
	// origin's, the Loaders this one shares them with (itself, or the
	// Loaders a view was made from: forViewer); the lists filtered by the
	// viewer's memberships are this viewer's own.
	origin           *Loaders
	projectIDsOfUser lazy[string, []string]
	membersOf        lazy[string, []*domain.Member]
	tasksOfProject   lazy[projectTasksKey, *domain.Conn[*domain.Task]]
	commentsOf       lazy[pageKey, *domain.Conn[*domain.Comment]]
	projectsOfUser   lazy[pageKey, *domain.Conn[*domain.Project]]
	assignedTo       lazy[pageKey, *domain.Conn[*domain.Task]]
	overdueOf        lazy[overdueKey, *domain.Conn[*domain.Task]]
	tasksByTag       lazy[pageKey, *domain.Conn[*domain.Task]]
}

// lazy is a loader made on its first use.
type lazy[K comparable, V any] struct {
	once sync.Once
	l    *loader[K, V]
}

// get returns the loader, made by mk if it is the first use.
func (z *lazy[K, V]) get(mk func() *loader[K, V]) *loader[K, V] {
	z.once.Do(func() { z.l = mk() })
	return z.l
}

// newLoaders makes the loaders of one request by viewer; now is the clock.
func newLoaders(store *dynamo.Store, viewer string, cfg LoaderConfig, now func() time.Time) *Loaders {
	l := &Loaders{store: store, viewer: viewer, cfg: cfg, now: now}
	l.origin = l
	if cfg.Steps != nil && !cfg.NoBatch {
		l.steps = cfg.Steps.Operation()
	}
	l.objects = newLoader(cfg, l.steps, "objects", func(ctx context.Context, refs []dynamo.Ref) []result[any] {
		vals, errs := store.Get(ctx, refs)
		res := make([]result[any], len(refs))
		for i := range refs {
			res[i] = result[any]{val: vals[i], err: errs[i]}
		}
		return res
	})
	return l
}

// The loaders of the lists, by the name of their batch spans and metrics.
// Those that do not depend on the viewer are origin's (its steps and
// clock), whoever asks.

func (l *Loaders) projectIDsOfUserLoader() *loader[string, []string] {
	o := l.origin
	return o.projectIDsOfUser.get(func() *loader[string, []string] {
		return each(o, "projectIDsOfUser", o.fetchProjectIDsOfUser)
	})
}

func (l *Loaders) membersOfLoader() *loader[string, []*domain.Member] {
	o := l.origin
	return o.membersOf.get(func() *loader[string, []*domain.Member] { return each(o, "membersOf", o.fetchMembersOf) })
}

func (l *Loaders) tasksOfProjectLoader() *loader[projectTasksKey, *domain.Conn[*domain.Task]] {
	o := l.origin
	return o.tasksOfProject.get(func() *loader[projectTasksKey, *domain.Conn[*domain.Task]] {
		return each(o, "tasksOfProject", o.fetchTasksOfProject)
	})
}

func (l *Loaders) commentsOfLoader() *loader[pageKey, *domain.Conn[*domain.Comment]] {
	o := l.origin
	return o.commentsOf.get(func() *loader[pageKey, *domain.Conn[*domain.Comment]] {
		return newLoader(o.cfg, o.steps, "commentsOf", o.fetchCommentsOf)
	})
}

func (l *Loaders) projectsOfUserLoader() *loader[pageKey, *domain.Conn[*domain.Project]] {
	return l.projectsOfUser.get(func() *loader[pageKey, *domain.Conn[*domain.Project]] {
		return each(l, "projectsOfUser", l.fetchProjectsOfUser)
	})
}

func (l *Loaders) assignedToLoader() *loader[pageKey, *domain.Conn[*domain.Task]] {
	return l.assignedTo.get(func() *loader[pageKey, *domain.Conn[*domain.Task]] {
		return each(l, "assignedTo", l.fetchAssignedTo)
	})
}

func (l *Loaders) overdueOfLoader() *loader[overdueKey, *domain.Conn[*domain.Task]] {
	return l.overdueOf.get(func() *loader[overdueKey, *domain.Conn[*domain.Task]] {
		return each(l, "overdueOf", l.fetchOverdueOf)
	})
}

func (l *Loaders) tasksByTagLoader() *loader[pageKey, *domain.Conn[*domain.Task]] {
	return l.tasksByTag.get(func() *loader[pageKey, *domain.Conn[*domain.Task]] {
		return each(l, "tasksByTag", l.fetchTasksByTag)
	})
}

// The fetch functions of the lists that newLoaders's loaders read (the
// others are in fetch.go).

func (l *Loaders) fetchProjectIDsOfUser(ctx context.Context, id string) ([]string, error) {
	ms, err := l.store.MembershipsOfUser(ctx, id)
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ProjectID
		l.objects.Prime(ctx, dynamo.MemberRef(m.ProjectID, m.UserID), m)
	}
	return ids, err
}

func (l *Loaders) fetchMembersOf(ctx context.Context, id string) ([]*domain.Member, error) {
	ms, err := l.store.MembersOf(ctx, id)
	for _, m := range ms {
		l.objects.Prime(ctx, dynamo.MemberRef(m.ProjectID, m.UserID), m)
	}
	return ms, err
}

func (l *Loaders) fetchTasksOfProject(ctx context.Context, k projectTasksKey) (*domain.Conn[*domain.Task], error) {
	var st *domain.TaskStatus
	if k.status != "" {
		st = &k.status
	}
	c, err := l.primeTasks(ctx)(l.store.TasksOfProject(ctx, k.id, st, k.page()))
	if a, ok := l.commentsAhead.Load(k); ok && c != nil {
		for _, t := range c.Items {
			l.threads.LoadOrStore(t.ID, dynamo.CommentsAsk{TaskID: t.ID, ProjectID: t.ProjectID, CommentCount: t.CommentCount})
			l.commentsOfLoader().Load(ctx, pageKeyOf(t.ID, a.(pageArgs)))
		}
	}
	return c, err
}

// fetchCommentsOf reads a batch of pages of comments, those of tasks whose
// items were read (threads) with what they said.
func (l *Loaders) fetchCommentsOf(ctx context.Context, keys []pageKey) []result[*domain.Conn[*domain.Comment]] {
	asks := make([]dynamo.CommentsAsk, len(keys))
	for i, k := range keys {
		asks[i] = dynamo.CommentsAsk{TaskID: k.id}
		if v, ok := l.threads.Load(k.id); ok {
			asks[i] = v.(dynamo.CommentsAsk)
		}
		asks[i].Page = k.page()
	}
	conns, errs := l.store.CommentsOfTasks(ctx, asks)
	res := make([]result[*domain.Conn[*domain.Comment]], len(keys))
	for i := range keys {
		res[i] = result[*domain.Conn[*domain.Comment]]{val: conns[i], err: errs[i]}
	}
	return res
}

func (l *Loaders) fetchAssignedTo(ctx context.Context, k pageKey) (*domain.Conn[*domain.Task], error) {
	return l.primeTasks(ctx)(l.store.TasksAssignedTo(ctx, k.id, k.page(), l.visibleTasksOf(k)))
}

func (l *Loaders) fetchOverdueOf(ctx context.Context, k overdueKey) (*domain.Conn[*domain.Task], error) {
	asOf, err := domain.ParseDate(k.asOf)
	if err != nil {
		return nil, err
	}
	return l.primeTasks(ctx)(l.store.OverdueTasks(ctx, k.id, asOf, k.page(), l.visibleTasksOf(k.pageKey)))
}

// each makes a loader that de-duplicates keys and runs one fetch per
// distinct key, all at once: a level of a query is one round trip however
// wide it is. The fan-out is bounded by the query's cost limit, and the
// calls to DynamoDB by the client's connection limit (client.TuneHTTP). (A
// per-request bound would also need to let nested loads through, or a level
// whose fetches wait on another loader could starve.)
func each[K comparable, V any](l *Loaders, name string, fetch func(context.Context, K) (V, error)) *loader[K, V] {
	return newLoader(l.cfg, l.steps, name, func(ctx context.Context, keys []K) []result[V] {
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

// today is the date of the request's clock: the default asOf of
// overdueTasks.
func (l *Loaders) today() domain.Date { return domain.DateOf(l.now()) }

// primeTasks puts the tasks of a page into the point-read cache.
func (l *Loaders) primeTasks(ctx context.Context) func(*domain.Conn[*domain.Task], error) (*domain.Conn[*domain.Task], error) {
	return func(c *domain.Conn[*domain.Task], err error) (*domain.Conn[*domain.Task], error) {
		if c != nil {
			for _, t := range c.Items {
				l.objects.Prime(ctx, dynamo.TaskRef(t.ID), t)
			}
		}
		return c, err
	}
}

type ctxKey struct{}

// For returns the request's loaders or, below a live event's field, the
// event's loaders for this subscriber (eventLoaders).
func For(ctx context.Context) *Loaders {
	if s, ok := ctx.Value(eventSlotKey{}).(*eventSlot); ok && s.scope != nil {
		return s.scope.loaders()
	}
	return ctx.Value(ctxKey{}).(*Loaders)
}

func load[T any](ctx context.Context, l *Loaders, ref dynamo.Ref) func() (T, error) {
	th := l.objects.Load(ctx, ref)
	return func() (T, error) {
		var zero T
		v, err := th()
		if err != nil {
			return zero, err
		}
		return v.(T), nil
	}
}

// UserByID loads a user (ENOTFOUND when there is no profile).
func (l *Loaders) UserByID(ctx context.Context, id string) (*domain.User, error) {
	return load[*domain.User](ctx, l, dynamo.UserRef(id))()
}

// ProjectByID loads a project (ENOTFOUND when it does not exist).
func (l *Loaders) ProjectByID(ctx context.Context, id string) (*domain.Project, error) {
	return load[*domain.Project](ctx, l, dynamo.ProjectRef(id))()
}

// TaskProject loads a task's project: from the copy on the viewer's
// profile (which the task's visibility check read) when the field selects
// only its id and name (copyFields), else its item.
func (l *Loaders) TaskProject(ctx context.Context, id string) (*domain.Project, error) {
	if graphql.HasOperationContext(ctx) && graphql.GetFieldContext(ctx) != nil &&
		onlyCopyFields(lookaheadFields(ctx)) {
		v, err := l.objects.Load(ctx, dynamo.UserRef(l.viewer))()
		if u, _ := v.(*domain.User); err == nil {
			if name, ok := policy.ProjectSeen(u, id); ok && name != "" { // "": a name too long for the copy
				return &domain.Project{ID: id, Name: name}, nil
			}
		}
	}
	return l.ProjectByID(ctx, id)
}

// TaskByID loads a task (ENOTFOUND when it does not exist).
func (l *Loaders) TaskByID(ctx context.Context, id string) (*domain.Task, error) {
	return load[*domain.Task](ctx, l, dynamo.TaskRef(id))()
}

// ProjectIDsOfUser loads the ids of every project the user is a member of.
func (l *Loaders) ProjectIDsOfUser(ctx context.Context, id string) ([]string, error) {
	return l.projectIDsOfUserLoader().Load(ctx, id)()
}

// MembersByProject loads a project's memberships.
func (l *Loaders) MembersByProject(ctx context.Context, id string) ([]*domain.Member, error) {
	return l.membersOfLoader().Load(ctx, id)()
}

// TasksByProject loads a page of a project's tasks.
func (l *Loaders) TasksByProject(ctx context.Context, id string, status *domain.TaskStatus, first *int, after *string, last *int, before *string) (*domain.Conn[*domain.Task], error) {
	return l.tasksOfProjectLoader().Load(ctx, projectTasksKeyOf(id, status, pageArgs{first, after, last, before}))()
}

// CommentsByTask loads a page of a task's comments, telling the loader
// what the task's item says of them.
func (l *Loaders) CommentsByTask(ctx context.Context, t *domain.Task, first *int, after *string, last *int, before *string) (*domain.Conn[*domain.Comment], error) {
	l.origin.threads.LoadOrStore(t.ID, dynamo.CommentsAsk{TaskID: t.ID, ProjectID: t.ProjectID, CommentCount: t.CommentCount})
	return l.commentsOfLoader().Load(ctx, pageKeyOf(t.ID, pageArgs{first, after, last, before}))()
}

// ProjectsByUser loads a page of the user's projects the viewer may see.
func (l *Loaders) ProjectsByUser(ctx context.Context, id string, first *int, after *string, last *int, before *string) (*domain.Conn[*domain.Project], error) {
	return l.projectsOfUserLoader().Load(ctx, pageKeyOf(id, pageArgs{first, after, last, before}))()
}

// TasksByAssignee loads a page of the user's assigned tasks the viewer may see.
func (l *Loaders) TasksByAssignee(ctx context.Context, id string, first *int, after *string, last *int, before *string) (*domain.Conn[*domain.Task], error) {
	k := pageKeyOf(id, pageArgs{first, after, last, before})
	if graphql.HasOperationContext(ctx) && graphql.GetFieldContext(ctx) != nil {
		l.noteTaskProjects(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field, k)
	}
	return l.assignedToLoader().Load(ctx, k)()
}

// OverdueByAssignee loads a page of the user's tasks the viewer may see
// that are overdue as of asOf (null: today).
func (l *Loaders) OverdueByAssignee(ctx context.Context, id string, asOf *domain.Date, first *int, after *string, last *int, before *string) (*domain.Conn[*domain.Task], error) {
	k := overdueKeyOf(id, asOf, l.today(), pageArgs{first, after, last, before})
	if graphql.HasOperationContext(ctx) && graphql.GetFieldContext(ctx) != nil {
		l.noteTaskProjects(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field, k.pageKey)
	}
	return l.overdueOfLoader().Load(ctx, k)()
}

// TasksByTag loads a page of the tasks with a tag in the viewer's projects.
func (l *Loaders) TasksByTag(ctx context.Context, tag string, first *int, after *string, last *int, before *string) (*domain.Conn[*domain.Task], error) {
	k := pageKeyOf(tag, pageArgs{first, after, last, before})
	if graphql.HasOperationContext(ctx) && graphql.GetFieldContext(ctx) != nil &&
		selectsNode(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field, "assignee") {
		l.tagAssignees.Store(k, struct{}{})
	}
	if graphql.HasOperationContext(ctx) && graphql.GetFieldContext(ctx) != nil {
		l.noteTaskProjects(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field, k)
	}
	return l.tasksByTagLoader().Load(ctx, k)()
}
