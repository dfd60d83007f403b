package dynamo

import (
	"context"

	"github.com/taskgraph/taskgraph/domain"
)

// TasksByTag is access pattern 6: the tasks with the tag in the given
// projects, by due date, tasks without a due date last; one Query per
// project, run at once and merged. The tasks are the copies their tag links
// carry (written in each task write's own transaction), so no task is read.
// keep sees the tasks. Returns EINVALID, EUNAVAILABLE.
func (s *Store) TasksByTag(ctx context.Context, tag string, projectIDs []string, page domain.Page, keep Filter[*domain.Task]) (*domain.Conn[*domain.Task], error) {
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
	conv := decodedOnce(func(it item) (*domain.Task, error) { return s.linkedTask(ctx, it) })
	spec := tasksByTag.of(pks...)
	// A link whose task is gone (nil) is never listed.
	spec.keep = keepAs(func(ctx context.Context, ts []*domain.Task) ([]bool, error) {
		var some []*domain.Task
		for _, t := range ts {
			if t != nil {
				some = append(some, t)
			}
		}
		ok := make([]bool, len(ts))
		kept := []bool(nil)
		if keep != nil && len(some) > 0 {
			if kept, err = keep(ctx, some); err != nil {
				return nil, err
			}
		}
		for i, t := range ts {
			if t != nil {
				ok[i] = kept == nil || kept[0]
				if kept != nil {
					kept = kept[1:]
				}
			}
		}
		return ok, nil
	}, conv)
	c, err := s.list(ctx, spec, page)
	if err != nil {
		return nil, err
	}
	return convConn(c, conv)
}

// linkedTask is the task a tag link carries; for a link written before
// links carried their task, the task read by id (nil when it is gone).
func (s *Store) linkedTask(ctx context.Context, it item) (*domain.Task, error) {
	t, err := linkedTask(it)
	if t != nil || err != nil {
		return t, err
	}
	tu, err := domain.ParseTaskID(str(it, "taskId"))
	if err != nil {
		return nil, internal(err, "decoding a tag link")
	}
	ti, err := s.getOne(ctx, taskKey(tu))
	if ti == nil || err != nil {
		return nil, err
	}
	return decodeAs[*domain.Task](ti)
}
