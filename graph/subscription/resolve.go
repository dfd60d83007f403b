package subscription

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/taskgraph/taskgraph/live"
)

// Step 7 of an event's path (deliver.go): each batch of its recipients is
// resolved once, the batches all at once (up to maxResolutions), over the
// event's loaders, which they share; their reads are dispatched by level
// (Scope.Enter: one count for all the resolutions entered), so that a
// level of every batch is one read per loader however many batches there
// are and however busy the machine.

// maxResolutions bounds the resolutions of one event that run at once:
// the others start, in order, as those end (each entered before the one
// it follows leaves, so that a level never goes without it).
const maxResolutions = 64

// resolution is one batch's resolution of an event.
type resolution struct {
	i     int // the batch's index
	scope Scope
	ctx   context.Context
	leave func()
}

// resolveAll resolves each of batches for d and returns, by batch, its
// response's JSON, or late when the event's read budget ran out meanwhile.
func (s *Server) resolveAll(d *live.Delivery, batches []*batch) (responses [][]byte, late []bool) {
	responses, late = make([][]byte, len(batches)), make([]bool, len(batches))
	if len(batches) == 0 {
		return responses, late
	}
	var mu sync.Mutex
	next := 0
	enter := func() *resolution { // the next batch, entered; nil when none is left
		mu.Lock()
		defer mu.Unlock()
		if next == len(batches) {
			return nil
		}
		next++
		return s.enter(d, next-1, batches[next-1])
	}
	work := func(r *resolution) {
		for r != nil {
			res := s.exec(r)
			following := enter()
			r.leave()
			responses[r.i], late[r.i] = s.encode(r.scope, res)
			r = following
		}
	}
	// Every resolution that starts now is entered before any of them
	// runs: the first level waits for all of them.
	first := make([]*resolution, min(len(batches), maxResolutions))
	for w := range first {
		first[w] = enter()
	}
	var wg sync.WaitGroup
	for _, r := range first[1:] {
		wg.Go(func() { work(r) })
	}
	work(first[0])
	wg.Wait()
	return responses, late
}

// enter prepares batch b's resolution (its group's selection for the
// event of d as b's viewer sees it; final: their last event of a project
// they left) and counts it in the event's dispatch (Scope.Enter).
func (s *Server) enter(d *live.Delivery, i int, b *batch) *resolution {
	ev := d.Event
	scope := s.cfg.Scope(d.Shared, b.viewer, b.final)
	pe := &model.ProjectEvent{Cursor: d.Cursor, Kind: ev.Kind, At: ev.At, ProjectID: ev.ProjectID, SubjectID: ev.SubjectID,
		Event: ev, Scope: scope}
	ctx := graphql.WithOperationContext(context.Background(), b.g.oc)
	ctx = auth.WithToken(ctx, auth.Token{ID: b.viewer})
	ctx = graphql.WithResponseContext(ctx, s.cfg.Present, s.cfg.Recover)
	ctx = context.WithValue(ctx, eventKey{}, pe)
	ctx, leave := scope.Enter(ctx)
	return &resolution{i: i, scope: scope, ctx: ctx, leave: sync.OnceFunc(leave)}
}

// exec runs r's operation; a panic leaves the event's dispatch first.
func (s *Server) exec(r *resolution) *graphql.Response {
	ok := false
	defer func() {
		if !ok {
			r.leave()
		}
	}()
	res := s.schema.Exec(r.ctx)(r.ctx)
	if res == nil {
		res = &graphql.Response{Data: json.RawMessage("null")}
	}
	res.Errors = append(res.Errors, graphql.GetErrors(r.ctx)...)
	ok = true
	return res
}

// encode returns the JSON of a resolution's response, or late when the
// event's read budget ran out meanwhile.
func (s *Server) encode(scope Scope, res *graphql.Response) (response []byte, late bool) {
	if scope.Late() {
		return nil, true
	}
	b, err := json.Marshal(res)
	if err != nil { // the executor's own JSON: never seen
		s.cfg.Log.Error("encoding an event", "err", err)
		return nil, true
	}
	return b, false
}
