package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/model"
)

// Helpers of the resolvers: conversions between GraphQL inputs and
// connections and the store's types.

func opt[T any](o graphql.Omittable[T]) domain.Opt[T] {
	return domain.Opt[T]{Set: o.IsSet(), Value: o.Value()}
}

func pageInfo[T any](c *domain.Conn[T]) *model.PageInfo {
	return &model.PageInfo{HasNextPage: c.HasNext, EndCursor: c.EndCursor(), HasPreviousPage: c.HasPrev, StartCursor: c.StartCursor()}
}

// edges pairs a page's items with their cursors.
func edges[T, E any](c *domain.Conn[T], edge func(cursor string, node T) E) []E {
	out := make([]E, len(c.Items))
	for i, n := range c.Items {
		out[i] = edge(c.Cursors[i], n)
	}
	return out
}

func taskConn(c *domain.Conn[*domain.Task], err error) (*model.TaskConnection, error) {
	if err != nil {
		return nil, err
	}
	return &model.TaskConnection{Nodes: c.Items, PageInfo: pageInfo(c), Edges: edges(c, func(cur string, n *domain.Task) *model.TaskEdge {
		return &model.TaskEdge{Cursor: cur, Node: n}
	})}, nil
}

func projectConn(c *domain.Conn[*domain.Project], err error) (*model.ProjectConnection, error) {
	if err != nil {
		return nil, err
	}
	return &model.ProjectConnection{Nodes: c.Items, PageInfo: pageInfo(c), Edges: edges(c, func(cur string, n *domain.Project) *model.ProjectEdge {
		return &model.ProjectEdge{Cursor: cur, Node: n}
	})}, nil
}

func commentConn(c *domain.Conn[*domain.Comment], err error) (*model.CommentConnection, error) {
	if err != nil {
		return nil, err
	}
	return &model.CommentConnection{Nodes: c.Items, PageInfo: pageInfo(c), Edges: edges(c, func(cur string, n *domain.Comment) *model.CommentEdge {
		return &model.CommentEdge{Cursor: cur, Node: n}
	})}, nil
}

func taskInput(in model.CreateTaskInput) domain.TaskInput {
	return domain.TaskInput{ProjectID: in.ProjectID, Title: in.Title, Description: in.Description.Value(),
		DueDate: in.DueDate.Value(), AssigneeID: in.AssigneeID.Value(), Tags: in.Tags.Value()}
}

func taskPatch(in model.UpdateTaskInput) dynamo.TaskPatch {
	return dynamo.TaskPatch{ID: in.ID, Title: opt(in.Title), Description: opt(in.Description), Status: opt(in.Status),
		DueDate: opt(in.DueDate), AssigneeID: opt(in.AssigneeID), Tags: opt(in.Tags), ExpectedVersion: in.ExpectedVersion.Value()}
}

// as runs f as the authenticated viewer, or fails with UNAUTHENTICATED.
func as[T any](ctx context.Context, f func(viewer string) (T, error)) (T, error) {
	v, err := auth.Viewer(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	return f(v)
}
