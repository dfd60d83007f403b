package graph

import (
	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/exec"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/syncer"
)

// NewExecutableSchema returns the schema's generated executor (graph/exec)
// on the resolvers r, each list priced for the complexity limit
// (setComplexity): what the operation pipeline wraps (pipeline.New), and
// what r's subscriptions resolve their events with.
func NewExecutableSchema(r *Resolver) graphql.ExecutableSchema {
	cfg := exec.Config{Resolvers: r}
	setComplexity(&cfg.Complexity)
	es := exec.NewExecutableSchema(cfg)
	if r.subs != nil {
		r.subs.SetSchema(es)
	}
	return es
}

// Assumed sizes of lists that take no `first`, for the cost estimate.
const (
	membersCost = 20
	tagsCost    = domain.MaxTagsOnTask
)

// setComplexity makes a connection cost its page size (first, or last when
// given) times its children.
func setComplexity(c *exec.ComplexityRoot) {
	page := func(child int, first, last *int) int {
		return 1 + child*max(min(loaders.PageSize(first, last), dynamo.MaxFirst), 1)
	}
	c.User.Projects = func(child int, first *int, _ *string, last *int, _ *string) int { return page(child, first, last) }
	c.User.AssignedTasks = func(child int, first *int, _ *string, last *int, _ *string) int { return page(child, first, last) }
	c.User.OverdueTasks = func(child int, _ *domain.Date, first *int, _ *string, last *int, _ *string) int {
		return page(child, first, last)
	}
	c.Project.Tasks = func(child int, first *int, _ *string, last *int, _ *string, _ *domain.TaskStatus) int {
		return page(child, first, last)
	}
	c.Project.Members = func(child int) int { return 1 + child*membersCost }
	c.Task.Comments = func(child int, first *int, _ *string, last *int, _ *string) int { return page(child, first, last) }
	c.Task.TagList = func(child int) int { return 1 + child*tagsCost } // Task.tags
	c.Tag.Tasks = func(child int, first *int, _ *string, last *int, _ *string) int { return page(child, first, last) }
	c.Query.TasksByTag = func(child int, _ string, first *int, _ *string, last *int, _ *string) int {
		return page(child, first, last)
	}
	c.Query.Sync = func(child int, _ *string, first *int) int { return syncer.Cost(child, first) } // what a page may read and answer
}
