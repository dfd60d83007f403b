package syncer

import (
	"context"
	"slices"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/model"
)

// output collects a page's objects: each at most once, as an upsert or a
// tombstone.
type output struct {
	upserts    map[string]model.Node
	order      []string
	tombstones map[string]string // id → typename
	tombOrder  []string
	tasks      []string // tasks to read
	comments   []string // comments to read
	users      []string // member entries: users to read
	candidates []string // users who may have stopped being visible
	want       map[string]bool
}

func newOutput() *output {
	return &output{upserts: map[string]model.Node{}, tombstones: map[string]string{}, want: map[string]bool{}}
}

func (o *output) upsert(id string, v model.Node) {
	if _, ok := o.upserts[id]; !ok {
		o.order = append(o.order, id)
	}
	o.upserts[id] = v
}

func (o *output) tomb(id, typename string) {
	if _, ok := o.tombstones[id]; !ok {
		o.tombOrder = append(o.tombOrder, id)
	}
	o.tombstones[id] = typename
}

// read notes an object to read once (list: tasks, comments, users or
// candidates).
func (o *output) read(list *[]string, kind, id string) {
	if !o.want[kind+id] {
		o.want[kind+id] = true
		*list = append(*list, id)
	}
}

// readObjects reads the tasks, comments and users the entries name, in one
// batch: an object that exists is an upsert, one that does not a
// tombstone (a comment of a task gone too).
func (pg *pageRun) readObjects(ctx context.Context) error {
	l, out := pg.l, pg.out
	tasks := make([]func() (*domain.Task, error), len(out.tasks))
	for i, id := range out.tasks {
		tasks[i] = loaders.Load[*domain.Task](ctx, l, dynamo.TaskRef(id))
	}
	comments := make([]func() (*domain.Comment, error), len(out.comments))
	for i, id := range out.comments {
		comments[i] = loaders.Load[*domain.Comment](ctx, l, dynamo.CommentRef(id))
	}
	users := make([]func() (*domain.User, error), len(out.users))
	for i, id := range out.users {
		users[i] = loaders.Load[*domain.User](ctx, l, dynamo.UserRef(id))
	}
	gone := map[string]bool{} // tasks that no longer exist
	for i, id := range out.tasks {
		t, err := loaders.NotFoundAsNil(tasks[i]())
		switch {
		case err != nil:
			return err
		case t == nil:
			gone[id] = true
			out.tomb(id, "Task")
		default:
			out.upsert(id, t)
		}
	}
	for i, id := range out.comments {
		c, err := loaders.NotFoundAsNil(comments[i]())
		taskID, _ := domain.ParseCommentID(id)
		switch {
		case err != nil:
			return err
		case c == nil || gone[taskID]: // a comment of a deleted task: gone with it
			out.tomb(id, "Comment")
		default:
			out.upsert(id, c)
		}
	}
	for i, id := range out.users {
		u, err := loaders.NotFoundAsNil(users[i]())
		if err != nil {
			return err
		}
		if u != nil {
			out.upsert(id, u)
		}
	}
	return nil
}

// nodes are the page's upserts: projects, users, tasks, then comments, but
// what is also a tombstone (a task or comment deleted meanwhile).
func (o *output) nodes() []model.Node {
	rank := func(v model.Node) int {
		switch v.(type) {
		case *domain.Project:
			return 0
		case *domain.User:
			return 1
		case *domain.Task:
			return 2
		}
		return 3
	}
	out := make([]model.Node, 0, len(o.order))
	for _, id := range o.order {
		if _, gone := o.tombstones[id]; gone && domain.KindOf(id) != domain.KindUser {
			continue
		}
		out = append(out, o.upserts[id])
	}
	slices.SortStableFunc(out, func(a, b model.Node) int { return rank(a) - rank(b) })
	return out
}

// tombs are the page's tombstones, but users it also upserts (visible
// through another project).
func (o *output) tombs() []*model.Tombstone {
	out := make([]*model.Tombstone, 0, len(o.tombOrder))
	for _, id := range o.tombOrder {
		if _, up := o.upserts[id]; up && domain.KindOf(id) == domain.KindUser {
			continue
		}
		out = append(out, &model.Tombstone{NodeID: id, Typename: o.tombstones[id]})
	}
	return out
}
