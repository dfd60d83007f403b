package dynamo

import (
	"context"

	"github.com/taskgraph/taskgraph/domain"
)

// TaskIDsByTag is access pattern 6: the ids of the tasks with the tag in the
// given projects, by due date, tasks without a due date last; one Query per
// project, run at once and merged. keep sees task ids. Returns EINVALID,
// EUNAVAILABLE.
func (s *Store) TaskIDsByTag(ctx context.Context, tag string, projectIDs []string, page domain.Page, keep Filter[string]) (*domain.Conn[string], error) {
	name, err := domain.NormalizeTag(tag)
	if err != nil {
		return nil, err
	}
	pks := make([]string, 0, len(projectIDs))
	for _, id := range projectIDs {
		p, err := domain.ParseProjectID(id)
		if err != nil {
			return nil, err
		}
		pks = append(pks, tagTasksPK(name, p))
	}
	conv := func(it item) (string, error) { return str(it, "taskId"), nil }
	spec := tasksByTag.of(pks...)
	spec.keep = keepAs(keep, conv)
	c, err := s.list(ctx, spec, page)
	if err != nil {
		return nil, err
	}
	return convConn(c, conv)
}
