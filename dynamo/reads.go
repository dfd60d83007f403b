package dynamo

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// Filter tells which of a batch of candidates the viewer may see; lists call
// it page by page and read on until a page is full.
type Filter[T any] func(ctx context.Context, candidates []T) ([]bool, error)

func keepAs[T any](f Filter[T], conv func(item) (T, error)) Keep {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, cand []item) ([]bool, error) {
		ts := make([]T, len(cand))
		for i, it := range cand {
			v, err := conv(it)
			if err != nil {
				return nil, err
			}
			ts[i] = v
		}
		return f(ctx, ts)
	}
}

func convConn[T any](c *Conn[item], conv func(item) (T, error)) (*Conn[T], error) {
	out := &Conn[T]{Items: make([]T, len(c.Items)), Cursors: c.Cursors, HasNext: c.HasNext}
	for i, it := range c.Items {
		v, err := conv(it)
		if err != nil {
			return nil, err
		}
		out.Items[i] = v
	}
	return out, nil
}

func listAs[T any](ctx context.Context, s *Store, spec listSpec, page Page, keep Filter[T]) (*Conn[T], error) {
	spec.keep = keepAs(keep, decodeAs[T])
	c, err := s.list(ctx, spec, page)
	if err != nil {
		return nil, err
	}
	return convConn(c, decodeAs[T])
}

// ProjectsOfUser is access pattern 2: the user's memberships, newest project
// first, those keep admits. Returns EINVALID, EUNAVAILABLE.
func (s *Store) ProjectsOfUser(ctx context.Context, userID string, page Page, keep Filter[*Member]) (*Conn[*Member], error) {
	if err := ValidUserID(userID); err != nil {
		return nil, err
	}
	return listAs(ctx, s, listSpec{index: indexGSI1, pkAttr: attrGSI1PK, skAttr: attrGSI1SK,
		pks: []string{userProjectsPK(userID)}, prefix: projectPrefix, desc: true,
		valid: validULIDCursor(projectPrefix)}, page, keep)
}

// MembershipsOfUser returns every membership of the user (including those
// of projects deleted but not yet cleaned up). Returns EINVALID, EUNAVAILABLE.
func (s *Store) MembershipsOfUser(ctx context.Context, userID string) ([]*Member, error) {
	if err := ValidUserID(userID); err != nil {
		return nil, err
	}
	items, err := s.queryAll(ctx, indexGSI1, attrGSI1PK, userProjectsPK(userID), attrGSI1SK, projectPrefix)
	if err != nil {
		return nil, err
	}
	ms := make([]*Member, len(items))
	for i, it := range items {
		if ms[i], err = decodeAs[*Member](it); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

// MembersOf returns a project's memberships, ordered by user id. Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) MembersOf(ctx context.Context, projectID string) ([]*Member, error) {
	p, err := ParseProjectID(projectID)
	if err != nil {
		return nil, err
	}
	items, err := s.queryAll(ctx, "", attrPK, projectPK(p), attrSK, memberPrefix)
	if err != nil {
		return nil, err
	}
	ms := make([]*Member, len(items))
	for i, it := range items {
		if ms[i], err = decodeAs[*Member](it); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

// TasksOfProject is access pattern 3: a project's tasks by due date, tasks
// without a due date last, optionally only those of one status. Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) TasksOfProject(ctx context.Context, projectID string, status *TaskStatus, page Page) (*Conn[*Task], error) {
	p, err := ParseProjectID(projectID)
	if err != nil {
		return nil, err
	}
	spec := listSpec{index: indexGSI1, pkAttr: attrGSI1PK, skAttr: attrGSI1SK, pks: []string{projectTasksPK(p)},
		prefix: duePrefix, valid: validDueCursor}
	if status != nil {
		if !status.Valid() {
			return nil, Errorf(EINVALID, "%q is not a task status", *status)
		}
		f := expression.Name("status").Equal(expression.Value(string(*status)))
		spec.filter = &f
	}
	return listAs[*Task](ctx, s, spec, page, nil)
}

// TasksAssignedTo is access pattern 4: the user's assigned tasks by due date,
// tasks without a due date last, those keep admits. Returns EINVALID,
// EUNAVAILABLE.
func (s *Store) TasksAssignedTo(ctx context.Context, userID string, page Page, keep Filter[*Task]) (*Conn[*Task], error) {
	if err := ValidUserID(userID); err != nil {
		return nil, err
	}
	return listAs(ctx, s, listSpec{index: indexGSI2, pkAttr: attrGSI2PK, skAttr: attrGSI2SK,
		pks: []string{assignedPK(userID, true), assignedPK(userID, false)}, prefix: duePrefix,
		valid: validDueCursor}, page, keep)
}

// OverdueTasks is access pattern 7: the user's assigned tasks that are not
// DONE and whose due date lies before asOf, by due date, those keep admits.
// Returns EINVALID, EUNAVAILABLE.
func (s *Store) OverdueTasks(ctx context.Context, userID string, asOf Date, page Page, keep Filter[*Task]) (*Conn[*Task], error) {
	if err := ValidUserID(userID); err != nil {
		return nil, err
	}
	return listAs(ctx, s, listSpec{index: indexGSI2, pkAttr: attrGSI2PK, skAttr: attrGSI2SK,
		pks: []string{assignedPK(userID, true)}, prefix: duePrefix, before: dueBefore(asOf),
		valid: validDueCursor}, page, keep)
}

// CommentsOf is access pattern 5: a task's comments, oldest first. Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) CommentsOf(ctx context.Context, taskID string, page Page) (*Conn[*Comment], error) {
	t, err := ParseTaskID(taskID)
	if err != nil {
		return nil, err
	}
	return listAs[*Comment](ctx, s, listSpec{pkAttr: attrPK, skAttr: attrSK, pks: []string{taskPK(t)},
		prefix: commentPrefix, valid: validULIDCursor(commentPrefix)}, page, nil)
}

// TaskIDsByTag is access pattern 6: the ids of the tasks with the tag in the
// given projects, by due date, tasks without a due date last; one Query per
// project, run at once and merged. keep sees task ids. Returns EINVALID,
// EUNAVAILABLE.
func (s *Store) TaskIDsByTag(ctx context.Context, tag string, projectIDs []string, page Page, keep Filter[string]) (*Conn[string], error) {
	name, err := NormalizeTag(tag)
	if err != nil {
		return nil, err
	}
	pks := make([]string, 0, len(projectIDs))
	for _, id := range projectIDs {
		p, err := ParseProjectID(id)
		if err != nil {
			return nil, err
		}
		pks = append(pks, tagTasksPK(name, p))
	}
	conv := func(it item) (string, error) { return str(it, "taskId"), nil }
	c, err := s.list(ctx, listSpec{index: indexGSI1, pkAttr: attrGSI1PK, skAttr: attrGSI1SK, pks: pks,
		prefix: duePrefix, valid: validDueCursor, keep: keepAs(keep, conv)}, page)
	if err != nil {
		return nil, err
	}
	return convConn(c, conv)
}

// NormalizeTag trims and lower-cases a tag and checks it: 1-50 characters of
// a-z, 0-9, '-', '_', '.'. Returns EINVALID.
func NormalizeTag(tag string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(tag))
	if t == "" || len(t) > 50 {
		return "", Errorf(EINVALID, "tag %q must have 1 to 50 characters", clip(tag))
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return "", Errorf(EINVALID, "tag %q may only contain a-z, 0-9, '-', '_' and '.'", clip(tag))
		}
	}
	return t, nil
}
