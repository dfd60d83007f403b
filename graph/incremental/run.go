package incremental

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/exec"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// incremental is one query with @defer as graphql-js 17 executes it
// (IncrementalExecutor), gqlgen resolving every field: the initial run
// resolves the plan's root selection; each field whose objects have work
// in the plan (spawns) opens, from the field middleware, once its value
// is resolved, the delivery groups of the @defer met at each object and
// the tasks there, those below a null dropped once the run is done. What
// is released, delivered and when is graphql-js's work queue's
// (deferqueue.go): a group is announced with the payload that delivers
// its parent, and its tasks then start (graphql-js without early
// execution), each on a goroutine of its own, with its own errors and
// null, resolving its fields on its object with the type's generated
// code; a task's own fields open groups and tasks the same way, and the
// task whose end releases groups starts their tasks itself, so that the
// fragments of a level start, and read, together.
type incremental struct {
	oc     *graphql.OperationContext // the operation with the plan's root selection and the spawning middleware
	ex     *exec.Executor
	schema *ast.Schema
	plan   *plan
	format PartFormat
	parts  *Parts
	signal chan struct{} // events are ready

	started bool
	ended   bool
	out     []*graphql.Response // the legacy parts still to hand over

	mu     sync.Mutex
	groups map[groupKey]*deliveryGroup
	q      *workQueue
	ready  []queueEvent // the work queue's events not answered yet
	ids    publisherV02
}

// execRun is one executor's run (the initial one, or a task's): the
// delivery groups it opened and the tasks it started, below its root.
type execRun struct {
	root   ast.Path
	groups []*deliveryGroup
	tasks  []*incTask
}

// deliveryGroup is a deferred fragment at one path (graphql-js's
// DeliveryGroup): what pending announces and completed ends.
type deliveryGroup struct {
	usage  *deferUsage
	path   ast.Path
	parent *deliveryGroup
}

// groupKey finds a delivery group: its @defer and its path.
type groupKey struct {
	usage *deferUsage
	path  string
}

// incTask is an execution group at one object.
type incTask struct {
	plan   *taskPlan
	kind   exec.Object
	obj    any
	path   ast.Path
	groups []*deliveryGroup
	run    *execRun
	ctx    context.Context // the object's, to resolve it with once released
	end    func()          // the dispatch's end of the part (nil without one)
	// Set under incremental.mu.
	state  taskState
	notify bool // started by the work queue: its end is an event
	data   json.RawMessage
	errs   gqlerror.List
	err    *gqlerror.Error // the error that nulled it
	work   *work
}

type taskState uint8

const (
	taskWaiting taskState = iota // not released yet
	taskRunning
	taskSucceeded
	taskFailed
)

// newIncremental returns the execution of the query oc with @defer on
// es, or nil when es is not the generated schema.
func newIncremental(es graphql.ExecutableSchema, oc *graphql.OperationContext, parts *Parts) *incremental {
	in := &incremental{schema: es.Schema(), parts: parts, signal: make(chan struct{}, 1), groups: map[groupKey]*deliveryGroup{}}
	if parts != nil {
		in.format = parts.format
	}
	in.plan = newPlan(oc, in.schema, in.format != PartsV02)
	op := *oc.Operation
	op.SelectionSet = in.plan.root.sel
	in.oc = &graphql.OperationContext{RawQuery: oc.RawQuery, Variables: oc.Variables, OperationName: oc.OperationName,
		Doc: oc.Doc, Extensions: oc.Extensions, Headers: oc.Headers, Operation: &op, DisableIntrospection: oc.DisableIntrospection,
		RecoverFunc: oc.RecoverFunc, ResolverMiddleware: in.fieldMiddleware(oc.ResolverMiddleware),
		RootResolverMiddleware: oc.RootResolverMiddleware, Stats: oc.Stats}
	ex, ok := exec.NewExecutor(es, in.oc)
	if !ok {
		return nil
	}
	in.ex = ex
	return in
}

// respond hands the transport the next response: the initial one first.
func (in *incremental) respond(ctx context.Context) *graphql.Response {
	if !in.started {
		in.started = true
		return in.initial(ctx)
	}
	return in.next(ctx)
}

type incrementalKey struct{}
type runKey struct{}

// initial resolves the root selection, on a context the request's end
// does not cancel but whose DynamoDB calls it does (so that every run
// ends, and soon, once its client has left), and answers the initial
// payload; without any task left, the only one.
func (in *incremental) initial(ctx context.Context) *graphql.Response {
	ctx = client.WithCancelOf(context.WithoutCancel(ctx), ctx)
	ctx = context.WithValue(graphql.WithOperationContext(ctx, in.oc), incrementalKey{}, in)
	run := &execRun{root: ast.Path{}}
	ctx = context.WithValue(ctx, runKey{}, run)
	in.begin(ctx, run, exec.Query, in.plan.root, nil, ast.Path{})
	data := marshal(exec.Query.Exec(in.ex, ctx, in.plan.root.sel, nil))
	in.mu.Lock()
	defer in.mu.Unlock()
	in.q = &workQueue{groups: map[*deliveryGroup]*groupNode{}, tasks: map[*incTask]*taskNode{}, launch: in.launch}
	tasks := in.kept(run, data)
	initial := in.q.begin(&work{groups: run.groups, tasks: tasks})
	if len(tasks) == 0 {
		in.ended = true
		return &graphql.Response{Data: data}
	}
	if in.parts != nil {
		in.parts.put(&PayloadV02{Pending: in.ids.pending(initial)})
	}
	return &graphql.Response{Data: data, HasNext: new(true)}
}

// next waits for the work queue's next events and answers their payload.
func (in *incremental) next(ctx context.Context) *graphql.Response {
	for {
		if len(in.out) > 0 {
			res := in.out[0]
			in.out = in.out[1:]
			return res
		}
		if in.ended {
			return nil
		}
		in.mu.Lock()
		events := in.ready
		in.ready = nil
		in.mu.Unlock()
		if len(events) == 0 {
			select {
			case <-in.signal:
				continue
			case <-ctx.Done():
				in.mu.Lock()
				in.q.stopped = true // nothing more is released
				in.mu.Unlock()
				in.ended = true
				return nil
			}
		}
		if in.format == PartsV02 {
			return in.payloadV02(events)
		}
		in.out = in.legacyParts(events)
	}
}

// begin opens, at the object obj of kind at path, the delivery groups and
// tasks of its plan o, for run; ctx is the object's (its path).
func (in *incremental) begin(ctx context.Context, run *execRun, kind exec.Object, o *objectPlan, obj any, path ast.Path) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, u := range o.usages {
		g := &deliveryGroup{usage: u, path: path, parent: in.group(u.parent, path)}
		in.groups[groupKey{u, pathKey(path)}] = g
		run.groups = append(run.groups, g)
	}
	for _, tp := range o.tasks {
		t := &incTask{plan: tp, kind: kind, obj: obj, path: path, run: &execRun{root: path}}
		t.ctx = context.WithValue(graphql.WithFreshResponseContext(ctx), runKey{}, t.run)
		for _, u := range tp.usages {
			if g := in.group(u, path); g != nil {
				t.groups = append(t.groups, g)
			}
		}
		run.tasks = append(run.tasks, t)
	}
}

// launch starts resolving t, released (incremental.mu held).
func (in *incremental) launch(t *incTask) {
	ctx := t.ctx
	if s := loaders.DispatchOf(ctx); s != nil {
		ctx, t.end = s.Part(ctx, t.kind.Name, t.plan.sel, t.kind.ChildFields(in.ex))
	}
	go in.runTask(ctx, t)
}

// handle handles the ends of tasks so far (incremental.mu held): the
// groups they deliver or fail, those released with them (whose tasks
// start now, from the goroutine of the task whose end released them), the
// events for the next payload.
func (in *incremental) handle() {
	if evs := in.q.drain(); len(evs) > 0 {
		in.ready = append(in.ready, evs...)
		select {
		case in.signal <- struct{}{}:
		default:
		}
	}
}

// group finds the delivery group of u for the object at path: opened
// there or at the object above it where u was met (nil for none).
func (in *incremental) group(u *deferUsage, path ast.Path) *deliveryGroup {
	if u == nil {
		return nil
	}
	for n := len(path); n >= 0; n-- {
		if g := in.groups[groupKey{u, pathKey(path[:n])}]; g != nil {
			return g
		}
	}
	return nil
}

// runTask resolves t's fields on its object and records how it ended.
func (in *incremental) runTask(ctx context.Context, t *incTask) {
	var m graphql.Marshaler
	func() {
		defer func() {
			if r := recover(); r != nil {
				graphql.AddError(ctx, in.ex.Recover(ctx, r))
				m = graphql.Null
			}
		}()
		m = t.kind.Exec(in.ex, ctx, t.plan.sel, t.obj)
	}()
	data, errs := marshal(m), graphql.GetErrors(ctx)
	in.mu.Lock()
	if m == graphql.Null {
		t.state, t.err = taskFailed, in.nullingError(t, errs)
	} else {
		t.state, t.data, t.errs = taskSucceeded, data, errs
		t.work = &work{groups: t.run.groups, tasks: in.kept(t.run, data)}
	}
	if t.notify {
		in.q.events = append(in.q.events, t)
		in.handle()
	}
	in.mu.Unlock()
	if t.end != nil {
		t.end()
	}
}

// nullingError is the error whose null reached t's root (the first one
// in errs that did), which graphql-js completes its groups with.
func (in *incremental) nullingError(t *incTask, errs gqlerror.List) *gqlerror.Error {
	for _, e := range errs {
		if len(e.Path) >= len(t.path) && !nullStops(in.oc.Doc, t.plan.sel, e.Path[len(t.path):]) {
			return e
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return &gqlerror.Error{Message: "the deferred fields could not be resolved", Path: t.path,
		Extensions: map[string]any{"code": codes.Internal}}
}

// kept returns the tasks run started whose object is still in its data
// (graphql-js drops those below a null).
func (in *incremental) kept(run *execRun, data json.RawMessage) []*incTask {
	if len(run.tasks) == 0 {
		return nil
	}
	var tree any
	_ = json.Unmarshal(data, &tree) // the executor's JSON
	var out []*incTask
	for _, t := range run.tasks {
		if _, ok := objectAt(tree, t.path[len(run.root):]); ok {
			out = append(out, t)
		}
	}
	return out
}

// fieldMiddleware is the operation's field middleware (innermost): once a
// field's value is resolved, the work of its objects begins.
func (in *incremental) fieldMiddleware(outer graphql.FieldMiddleware) graphql.FieldMiddleware {
	return func(ctx context.Context, next graphql.Resolver) (any, error) {
		return outer(ctx, func(ctx context.Context) (any, error) {
			res, err := next(ctx)
			if err == nil && res != nil {
				in.spawn(ctx, res)
			}
			return res, err
		})
	}
}

// spawn begins the work of the objects of v, the value of ctx's field.
func (in *incremental) spawn(ctx context.Context, v any) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil {
		return
	}
	plans := in.plan.spawns[fc.Field.Field]
	run, _ := ctx.Value(runKey{}).(*execRun)
	if plans == nil || run == nil {
		return
	}
	in.walk(ctx, run, fc.Field.Definition.Type, v, fc.Path(), plans)
}

// walk finds the objects of v, a value of type t at path, through its
// lists (each item's context as gqlgen makes it).
func (in *incremental) walk(ctx context.Context, run *execRun, t *ast.Type, v any, path ast.Path, plans map[string]*objectPlan) {
	if v == nil {
		return
	}
	if t.Elem != nil {
		rv := reflect.ValueOf(v)
		for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
			if rv.IsNil() {
				return
			}
			rv = rv.Elem()
		}
		if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
			return
		}
		for i := range rv.Len() {
			item := rv.Index(i).Interface()
			ictx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i, Result: item})
			in.walk(ictx, run, t.Elem, item, append(slices.Clip(path), ast.PathIndex(i)), plans)
		}
		return
	}
	kind, obj, ok := exec.ObjectOf(in.schema, t.NamedType, v)
	if o := plans[kind.Name]; ok && o != nil {
		in.begin(ctx, run, kind, o, obj, slices.Clone(path))
	}
}

// marshal writes m's JSON.
func marshal(m graphql.Marshaler) json.RawMessage {
	var buf bytes.Buffer
	m.MarshalGQL(&buf)
	return buf.Bytes()
}
