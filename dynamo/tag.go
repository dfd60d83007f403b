package dynamo

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
)

// Tagged names a task of a tag index with its project and assignee ("" for
// none), so that a TaskReader can read all three at once. Listed is the
// task as its index entry lists it (id, project, title, due date,
// assignee) when the entry carries its title, nil otherwise (an entry
// written before titles were, a title too long for an entry, a tag link):
// a reader whose selection needs no more may take it instead of reading
// the task.
type Tagged struct {
	TaskID, ProjectID, AssigneeID string
	Listed                        *domain.Task
}

// TaskReader reads the tasks named (for TasksByTag), in their order; nil
// for a task that is gone. Nil: TasksByTag reads them itself.
type TaskReader func(ctx context.Context, tasks []Tagged) ([]*domain.Task, error)

// TasksByTag is access pattern 6: the tasks with the tag in the given
// projects, by due date, tasks without a due date last. It reads the
// projects' tag indexes (tagindex.go) with one BatchGetItem and the page's
// tasks with read (one more); where the table has no indexes yet or one is
// full, it reads the tag links instead, one Query per project, merged, and
// their tasks with read. keep sees the tasks. Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) TasksByTag(ctx context.Context, tag string, projectIDs []string, page domain.Page, keep Filter[*domain.Task], read TaskReader) (*domain.Conn[*domain.Task], error) {
	name, err := domain.NormalizeTag(tag)
	if err != nil {
		return nil, err
	}
	pus := make([]string, 0, len(projectIDs))
	for _, id := range projectIDs {
		p, err := domain.ParseProjectID(id)
		if err != nil {
			return nil, err
		}
		pus = append(pus, p)
	}
	size, back, err := pageSize(page)
	if err != nil {
		return nil, err
	}
	after, err := cursorArg("after", page.After, validDueCursor)
	if err != nil {
		return nil, err
	}
	before, err := cursorArg("before", page.Before, validDueCursor)
	if err != nil {
		return nil, err
	}
	entries, indexed, err := s.tagEntries(ctx, name, pus)
	if err != nil {
		return nil, err
	}
	if read == nil {
		read = s.readTagged
	}
	if !indexed {
		return s.tasksByTagLinks(ctx, name, pus, page, keep, read)
	}
	return indexPage(ctx, entries, after, before, size, back, keep, read)
}

// indexPage is one page of a tag index's entries (in sort-key order),
// bounded by the cursors after and before: the tasks of the first (or, back,
// the last) entries that read finds and keep keeps, one more than size
// asked for so that the page knows whether more remain, read on while too
// few are.
func indexPage(ctx context.Context, entries []tagEntry, after, before string, size int, back bool, keep Filter[*domain.Task], read TaskReader) (*domain.Conn[*domain.Task], error) {
	lo, hi := 0, len(entries)
	if after != "" {
		lo, _ = slices.BinarySearchFunc(entries, after, func(e tagEntry, sk string) int { return strings.Compare(e.sk, sk+"\x00") })
	}
	if before != "" {
		hi, _ = slices.BinarySearchFunc(entries, before, func(e tagEntry, sk string) int { return strings.Compare(e.sk, sk) })
	}
	window := entries[lo:max(lo, hi)]
	if back {
		window = slices.Clone(window)
		slices.Reverse(window)
	}
	var kept []*domain.Task
	var cursors []string
	for len(kept) <= size && len(window) > 0 {
		n := min(len(window), size+1-len(kept))
		chunk := window[:n]
		window = window[n:]
		named := make([]Tagged, n)
		for i, e := range chunk {
			named[i] = Tagged{TaskID: e.taskID, ProjectID: e.projectID, AssigneeID: e.assigneeID, Listed: e.listed()}
		}
		tasks, ok, err := readKept(ctx, named, read, keep)
		if err != nil {
			return nil, err
		}
		for i, t := range tasks {
			if ok[i] {
				kept, cursors = append(kept, t), append(cursors, chunk[i].sk)
			}
		}
	}
	more := len(kept) > size
	kept, cursors = kept[:min(len(kept), size)], cursors[:min(len(cursors), size)]
	c := &domain.Conn[*domain.Task]{Items: kept, Cursors: make([]string, len(kept))}
	if back {
		slices.Reverse(c.Items)
		slices.Reverse(cursors)
		c.HasPrev = more
	} else {
		c.HasNext = more
	}
	for i, sk := range cursors {
		c.Cursors[i] = cursor.List(sk)
	}
	return c, nil
}

// tasksByTagLinks is TasksByTag through the tag links: one Query per
// project, run at once and merged; each batch of candidate links has its
// tasks read by read (with what their projects' visibility and assignees
// need, in the graph's batch), and a link whose task is gone is never
// listed.
func (s *Store) tasksByTagLinks(ctx context.Context, name string, pus []string, page domain.Page, keep Filter[*domain.Task], read TaskReader) (*domain.Conn[*domain.Task], error) {
	pks := make([]string, len(pus))
	for i, p := range pus {
		pks[i] = tagTasksPK(name, p)
	}
	var mu sync.Mutex
	tasks := map[string]*domain.Task{} // link's key → its task, as read
	spec := tasksByTag.of(pks...)
	spec.keep = func(ctx context.Context, cand []item) ([]bool, error) {
		named := make([]Tagged, len(cand))
		for i, it := range cand {
			named[i] = Tagged{TaskID: str(it, "taskId"), ProjectID: str(it, "projectId"), AssigneeID: str(it, "assigneeId")}
		}
		read, ok, err := readKept(ctx, named, read, keep)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		for i, t := range read {
			if ok[i] {
				tasks[keyOf(cand[i]).PK+"/"+keyOf(cand[i]).SK] = t
			}
		}
		return ok, nil
	}
	c, err := s.list(ctx, spec, page)
	if err != nil {
		return nil, err
	}
	return convConn(c, func(it item) (*domain.Task, error) {
		mu.Lock()
		defer mu.Unlock()
		return tasks[keyOf(it).PK+"/"+keyOf(it).SK], nil
	})
}

// readKept reads the named tasks with read and tells which of them are
// listed: those that exist and that keep (nil: all) keeps.
func readKept(ctx context.Context, named []Tagged, read TaskReader, keep Filter[*domain.Task]) ([]*domain.Task, []bool, error) {
	tasks, err := read(ctx, named)
	if err != nil {
		return nil, nil, err
	}
	var found []*domain.Task
	for _, t := range tasks {
		if t != nil {
			found = append(found, t)
		}
	}
	kept := []bool(nil)
	if keep != nil && len(found) > 0 {
		if kept, err = keep(ctx, found); err != nil {
			return nil, nil, err
		}
	}
	ok := make([]bool, len(tasks))
	for i, t := range tasks {
		if t != nil {
			ok[i] = kept == nil || kept[0]
			if kept != nil {
				kept = kept[1:]
			}
		}
	}
	return tasks, ok, nil
}

// readTagged is the TaskReader of a caller without one: the tasks alone.
func (s *Store) readTagged(ctx context.Context, named []Tagged) ([]*domain.Task, error) {
	refs := make([]Ref, len(named))
	for i, n := range named {
		refs[i] = TaskRef(n.TaskID)
	}
	vals, errs := s.Get(ctx, refs)
	out := make([]*domain.Task, len(named))
	for i := range named {
		switch {
		case domain.IsNotFound(errs[i]):
		case errs[i] != nil:
			return nil, errs[i]
		default:
			out[i], _ = vals[i].(*domain.Task)
		}
	}
	return out, nil
}
