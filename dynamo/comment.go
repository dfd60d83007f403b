package dynamo

import (
	"context"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/policy"
)

var errCommentNotFound = domain.Errorf(domain.ENOTFOUND, "comment not found")

// A comment is read by reference (CommentRef, Get).

// CommentsOf is access pattern 5: a task's comments, oldest first. Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) CommentsOf(ctx context.Context, taskID string, page domain.Page) (*domain.Conn[*domain.Comment], error) {
	t, err := domain.ParseTaskID(taskID)
	if err != nil {
		return nil, err
	}
	return listAs[*domain.Comment](ctx, s, commentsOfTask.of(taskPK(t)), page, nil)
}

// AddComment adds the viewer's comment to a task they may see. Returns
// EINVALID, ENOTFOUND.
func (s *Store) AddComment(ctx context.Context, viewer string, in domain.CommentInput) (*domain.Comment, error) {
	return once(ctx, s, func() (*domain.Comment, error) {
		tu, err := domain.ParseTaskID(in.TaskID)
		if err != nil {
			return nil, err
		}
		body, err := domain.CleanText("body", &in.Body)
		if err != nil {
			return nil, err
		}
		if body == nil {
			return nil, domain.Errorf(domain.EINVALID, "body must have 1 to %d characters after trimming", domain.MaxTextLen)
		}
		return retryOnChange(ctx, concurrentChange, func() (*domain.Comment, error) { return s.addComment(ctx, viewer, tu, *body) })
	}, replayComment)
}

func (s *Store) addComment(ctx context.Context, viewer, tu, body string) (*domain.Comment, error) {
	task, p, _, unlock, err := s.readTask(ctx, viewer, tu)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.roomForComment(task); err != nil {
		return nil, err
	}
	now := s.now()
	c := &domain.Comment{ID: domain.CommentIDOf(tu, s.ids.next(now)), TaskID: task.ID, AuthorID: viewer, Body: body, CreatedAt: now}
	pu := ulidOf(task.ProjectID)
	var t txn
	t.logTo(pu, p.Seq, now)
	s.countComments(&t, task, task.CommentCount+1)
	t.onProject(pu, exists(), nil, errTaskNotFound)
	s.memberGuard(&t, pu, viewer, errTaskNotFound)
	e := s.logChange(&t, c.ID, entryAt{}, nil) // stands for the task's new count too
	t.put(s.table, withEntry(indexComment(commentToItem(c), pu), e), ptr(absent()), nil)
	t.result, t.project = c.ID, task.ProjectID
	snap := *task // as this change leaves it: the count is conditioned on the one read
	snap.CommentCount++
	t.event = changeEvent(domain.EventCommentAdded, task.ProjectID, c.ID, viewer, now, &snap, c, nil)
	if err := s.commit(ctx, &t); err != nil {
		return nil, err
	}
	return c, nil
}

// DeleteComment deletes a comment; its author or the project's owner only.
// Returns EINVALID, ENOTFOUND, EFORBIDDEN.
func (s *Store) DeleteComment(ctx context.Context, viewer, id string) error {
	_, err := once(ctx, s, func() (string, error) {
		return retryOnChange(ctx, concurrentChange, func() (string, error) { return id, s.deleteComment(ctx, viewer, id) })
	}, replayDeleted())
	return err
}

func (s *Store) deleteComment(ctx context.Context, viewer, id string) error {
	tu, cu, err := domain.SplitCommentID(id)
	if err != nil {
		return err
	}
	items, err := s.getItems(ctx, []key{commentKey(tu, cu)})
	if err != nil {
		return err
	}
	if items[0] == nil {
		return errCommentNotFound
	}
	c, err := decodeAs[*domain.Comment](items[0])
	if err != nil {
		return err
	}
	task, p, _, unlock, err := s.readTask(ctx, viewer, tu)
	if err != nil {
		return errCommentNotFound
	}
	defer unlock()
	pu := ulidOf(task.ProjectID)
	asOwner, err := policy.MayDeleteComment(viewer, c, p)
	if err != nil {
		return err
	}
	projectCond := exists()
	if asOwner {
		projectCond = ownerGuard(viewer) // the right rests on the ownership read
	}
	now := s.now()
	var t txn
	t.logTo(pu, p.Seq, now)
	t.del(s.table, commentKey(tu, cu), ptr(exists()), errCommentNotFound)
	s.countComments(&t, task, task.CommentCount-1)
	t.onProject(pu, projectCond, nil, errCommentNotFound)
	s.memberGuard(&t, pu, viewer, errCommentNotFound)
	s.logGone(&t, c.ID, entryOf(items[0]), nil, nil) // stands for the task's new count too
	t.result, t.project = id, task.ProjectID
	// The task snapshot is the one read above to check access: no extra
	// read. The count's condition in the transaction proves it still
	// exists with the count read, so the snapshot's count is exact; a
	// concurrent update may have moved its version on, which the task's
	// own TASK_UPDATED event reports.
	snap := *task
	snap.CommentCount--
	t.event = changeEvent(domain.EventCommentDeleted, task.ProjectID, c.ID, viewer, now, &snap, nil, nil)
	return s.commit(ctx, &t)
}
