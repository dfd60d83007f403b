package graph

import (
	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/cost"
	"github.com/taskgraph/taskgraph/graph/exec"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/syncer"
)

// NewExecutableSchema returns the schema's generated executor (graph/exec)
// on the resolvers r, each list priced for the complexity limit by the
// schema's cost directives (setComplexity): what the operation pipeline
// wraps (pipeline.New), and what r's subscriptions resolve their events
// with.
func NewExecutableSchema(r *Resolver) graphql.ExecutableSchema {
	cfg := exec.Config{Resolvers: r}
	setComplexity(&cfg.Complexity, Weights())
	es := exec.NewExecutableSchema(cfg)
	if r.subs != nil {
		r.subs.SetSchema(es)
	}
	return es
}

// Weights are the cost directives of schema.graphqls (@cost, @listSize;
// graph/cost), which the complexity limit and the actual cost both read.
func Weights() *cost.Weights { return cost.MustRead(exec.NewExecutableSchema(exec.Config{}).Schema()) }

// setComplexity prices every field with a cost directive by it (graph/cost):
// a connection its page size (the larger of first and last given, at most
// dynamo.MaxFirst) times its selection, a list without slicing arguments
// its assumedSize times its element's. A sync page costs more than its
// directive says (syncer.Cost: the projects it reads besides).
func setComplexity(c *exec.ComplexityRoot, w *cost.Weights) {
	type page = func(child int, first *int, _ *string, last *int, _ *string) int
	connection := func(typ, field string) page {
		f := w.Field(typ, field)
		return func(child int, first *int, _ *string, last *int, _ *string) int {
			return f.Estimate(child, f.Size(pageArgs(first, last), dynamo.MaxFirst))
		}
	}
	list := func(typ, field string) func(child int) int {
		f := w.Field(typ, field)
		return func(child int) int { return f.Estimate(child, f.Size(noArgs, dynamo.MaxFirst)) }
	}
	c.User.Projects = connection("User", "projects")
	c.User.AssignedTasks = connection("User", "assignedTasks")
	overdue := connection("User", "overdueTasks")
	c.User.OverdueTasks = func(child int, _ *domain.Date, first *int, after *string, last *int, before *string) int {
		return overdue(child, first, after, last, before)
	}
	tasks := connection("Project", "tasks")
	c.Project.Tasks = func(child int, first *int, after *string, last *int, before *string, _ *domain.TaskStatus) int {
		return tasks(child, first, after, last, before)
	}
	c.Project.Members = list("Project", "members")
	c.Task.Comments = connection("Task", "comments")
	c.Task.TagList = list("Task", "tags")
	c.Tag.Tasks = connection("Tag", "tasks")
	byTag := connection("Query", "tasksByTag")
	c.Query.TasksByTag = func(child int, _ string, first *int, after *string, last *int, before *string) int {
		return byTag(child, first, after, last, before)
	}
	syncPage := w.Field("Query", "sync")
	c.Query.Sync = func(child int, _ *string, first *int) int { // what a page may read and answer
		return max(syncer.Cost(child, first), syncPage.Estimate(child, syncPage.Size(pageArgs(first, nil), dynamo.MaxFirst)))
	}
}

// pageArgs are a list's slicing arguments as cost.Field.Size reads them: a
// backward page's last, or else first, its default when null (as the
// loaders read them: loaders.PageSize). first and last together are
// refused before anything runs (the pipeline's pageArguments).
func pageArgs(first, last *int) func(string) (int, bool) {
	return func(name string) (int, bool) {
		switch {
		case last != nil:
			return *last, name == "last"
		case name == "first":
			return loaders.PageSize(first, nil), true
		}
		return 0, false
	}
}

// noArgs: a list without arguments (its assumedSize).
func noArgs(string) (int, bool) { return 0, false }
