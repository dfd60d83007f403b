package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// TasksOfProjectListed is TasksOfProject with what a list shows of each
// task: id, project, title, status, due date, assignee, tags and comment
// count, from the task's GSI4 entry, less than half its item; description
// nil, times zero and version 0. For a page that selects none of those
// (the caller knows); such tasks are not cached as read by id. Until the
// backfill that gives the tasks written before GSI4 their key there is
// done, and for a strongly consistent read, it is TasksOfProject. Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) TasksOfProjectListed(ctx context.Context, projectID string, status *domain.TaskStatus, page domain.Page) (*domain.Conn[*domain.Task], error) {
	if !s.hasBackfill(tasksLeanBackfill) || strong(ctx) {
		return s.TasksOfProject(ctx, projectID, status, page)
	}
	p, err := domain.ParseProjectID(projectID)
	if err != nil {
		return nil, err
	}
	spec := tasksOfProjectListed.of(leanTasksPK(p))
	if err := byStatus(&spec, status); err != nil {
		return nil, err
	}
	c, err := s.list(ctx, spec, page)
	if err != nil {
		return nil, err
	}
	for _, it := range c.Items {
		listedTask(it)
	}
	return convConn(c, decodeAs[*domain.Task])
}

// listedTask gives a task's GSI4 entry the type decode reads; its id and
// project id are filled in from its keys as every task item's are
// (leanitems.go).
func listedTask(it item) {
	it["type"] = &types.AttributeValueMemberS{Value: typeTask}
}
