package dynamo

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/policy"
)

var errTaskNotFound = domain.Errorf(domain.ENOTFOUND, "task not found")

// A task is read by reference (TaskRef, Get); the tasks with a tag are in
// tag.go.

// TasksOfProject is access pattern 3: a project's tasks by due date, tasks
// without a due date last, optionally only those of one status. Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) TasksOfProject(ctx context.Context, projectID string, status *domain.TaskStatus, page domain.Page) (*domain.Conn[*domain.Task], error) {
	p, err := domain.ParseProjectID(projectID)
	if err != nil {
		return nil, err
	}
	spec := tasksOfProject.of(projectTasksPK(p))
	if err := byStatus(&spec, status); err != nil {
		return nil, err
	}
	return listAs[*domain.Task](ctx, s, spec, page, nil)
}

// byStatus filters a list of tasks to one status (nil: all).
func byStatus(spec *listSpec, status *domain.TaskStatus) error {
	if status == nil {
		return nil
	}
	if !status.Valid() {
		return domain.Errorf(domain.EINVALID, "%q is not a task status", *status)
	}
	f := expression.Name("status").Equal(expression.Value(string(*status)))
	spec.filter = &f
	return nil
}

// TasksAssignedTo is access pattern 4: the user's assigned tasks by due date,
// tasks without a due date last, those keep admits. Returns EINVALID,
// EUNAVAILABLE.
func (s *Store) TasksAssignedTo(ctx context.Context, userID string, page domain.Page, keep Filter[*domain.Task]) (*domain.Conn[*domain.Task], error) {
	if err := domain.ValidUserID(userID); err != nil {
		return nil, err
	}
	return listAs(ctx, s, tasksOfAssignee.of(assignedPK(userID, true), assignedPK(userID, false)), page, keep)
}

// OverdueTasks is access pattern 7: the user's assigned tasks that are not
// DONE and whose due date lies before asOf, by due date, those keep admits.
// Returns EINVALID, EUNAVAILABLE.
func (s *Store) OverdueTasks(ctx context.Context, userID string, asOf domain.Date, page domain.Page, keep Filter[*domain.Task]) (*domain.Conn[*domain.Task], error) {
	if err := domain.ValidUserID(userID); err != nil {
		return nil, err
	}
	spec := tasksOfAssignee.of(assignedPK(userID, true))
	spec.before = dueBefore(asOf)
	return listAs(ctx, s, spec, page, keep)
}

// CreateTask creates a task in a project the viewer is a member of.
// Returns EINVALID (including an assignee who is no member), ENOTFOUND.
func (s *Store) CreateTask(ctx context.Context, viewer string, in domain.TaskInput) (*domain.Task, error) {
	return once(ctx, s, func() (*domain.Task, error) { return s.createTask(ctx, viewer, in) }, replayTask)
}

func (s *Store) createTask(ctx context.Context, viewer string, in domain.TaskInput) (*domain.Task, error) {
	pu, err := domain.ParseProjectID(in.ProjectID)
	if err != nil {
		return nil, err
	}
	title, err := domain.CleanName("title", in.Title)
	if err != nil {
		return nil, err
	}
	desc, err := domain.CleanText("description", in.Description)
	if err != nil {
		return nil, err
	}
	tg, err := domain.CleanTags(in.Tags)
	if err != nil {
		return nil, err
	}
	if in.AssigneeID != nil {
		if err := domain.ValidUserID(*in.AssigneeID); err != nil {
			return nil, domain.Errorf(domain.EINVALID, "assigneeId: %s", domain.ErrorMessage(err))
		}
	}
	now := s.now()
	task := &domain.Task{ID: domain.TaskIDOf(s.ids.next(now)), ProjectID: domain.ProjectIDOf(pu), Title: title, Description: desc,
		Status: domain.StatusTodo, DueDate: in.DueDate, AssigneeID: in.AssigneeID, Tags: tg, CreatedAt: now, UpdatedAt: now,
		Version: 1}
	// The project's change log's position is read first (the transaction
	// takes the next one on the condition that it is still that).
	// This instance's changes to the project wait for each other
	// (lockProject), and the position is the one it last wrote, or read.
	return retryOnChange(ctx, concurrentChange, func() (*domain.Task, error) {
		unlock, err := s.lockProject(ctx, pu)
		if err != nil {
			return nil, err
		}
		defer unlock()
		seq, known := s.knownSeq(pu)
		if !known {
			pi, err := s.getOne(ctx, projectKey(pu))
			if err != nil {
				return nil, err
			}
			if pi == nil {
				return nil, errProjectNotFound
			}
			seq = numberOf(pi, attrSeq)
		}
		err = s.commitIndexed(ctx, func(t *txn) error {
			t.logTo(pu, seq, now)
			s.countTasks(t, pu, map[domain.TaskStatus]int{domain.StatusTodo: 1}, errProjectNotFound)
			s.memberChecks(t, pu, viewer, in.AssigneeID)
			e := s.logChange(t, task.ID, entryAt{}, nil)
			t.put(s.table, withEntry(taskToItem(task), e), ptr(absent()), nil)
			s.putTagLinks(t, nil, task)
			t.result, t.project = task.ID, task.ProjectID
			t.event = changeEvent(domain.EventTaskCreated, task.ProjectID, task.ID, viewer, now, task, nil, nil)
			return nil
		})
		if err != nil {
			return nil, err
		}
		return task, nil
	})
}

// TaskPatch changes a task; fields left out stay as they are, fields given
// as null are cleared.
type TaskPatch struct {
	ID              string
	Title           domain.Opt[*string]
	Description     domain.Opt[*string]
	Status          domain.Opt[*domain.TaskStatus]
	DueDate         domain.Opt[*domain.Date]
	AssigneeID      domain.Opt[*string]
	Tags            domain.Opt[[]string] // the whole new set; null clears it
	ExpectedVersion *int
}

// UpdateTask applies a patch to a task and increases its version by one.
// With ExpectedVersion, a task at another version is not changed (ECONFLICT).
// Returns EINVALID, ENOTFOUND, ECONFLICT.
func (s *Store) UpdateTask(ctx context.Context, viewer string, in TaskPatch) (*domain.Task, error) {
	return once(ctx, s, func() (*domain.Task, error) { return s.updateTaskOnce(ctx, viewer, in) }, replayTask)
}

func (s *Store) updateTaskOnce(ctx context.Context, viewer string, in TaskPatch) (*domain.Task, error) {
	tu, err := domain.ParseTaskID(in.ID)
	if err != nil {
		return nil, err
	}
	apply, err := taskPatcher(in)
	if err != nil {
		return nil, err
	}
	return retryOnChange(ctx, "the task kept changing while it was being updated; retry", func() (*domain.Task, error) {
		return s.updateTask(ctx, viewer, tu, in, apply)
	})
}

// taskPatcher validates a patch and returns the function that applies it.
func taskPatcher(in TaskPatch) (func(*domain.Task), error) {
	var title string
	var desc *string
	var tg []string
	var err error
	if in.Title.Set {
		if in.Title.Value == nil {
			return nil, domain.Errorf(domain.EINVALID, "title cannot be cleared")
		}
		if title, err = domain.CleanName("title", *in.Title.Value); err != nil {
			return nil, err
		}
	}
	if in.Description.Set {
		if desc, err = domain.CleanText("description", in.Description.Value); err != nil {
			return nil, err
		}
	}
	if in.Status.Set && (in.Status.Value == nil || !in.Status.Value.Valid()) {
		return nil, domain.Errorf(domain.EINVALID, "status cannot be cleared")
	}
	if in.AssigneeID.Set && in.AssigneeID.Value != nil {
		if err := domain.ValidUserID(*in.AssigneeID.Value); err != nil {
			return nil, domain.Errorf(domain.EINVALID, "assigneeId: %s", domain.ErrorMessage(err))
		}
	}
	if in.Tags.Set {
		if tg, err = domain.CleanTags(in.Tags.Value); err != nil {
			return nil, err
		}
	}
	return func(t *domain.Task) {
		if in.Title.Set {
			t.Title = title
		}
		if in.Description.Set {
			t.Description = desc
		}
		if in.Status.Set {
			t.Status = *in.Status.Value
		}
		if in.DueDate.Set {
			t.DueDate = in.DueDate.Value
		}
		if in.AssigneeID.Set {
			t.AssigneeID = in.AssigneeID.Value
		}
		if in.Tags.Set {
			t.Tags = tg
		}
	}, nil
}

// readTask reads a task with the project and the viewer's membership, and
// reports ENOTFOUND unless the viewer may see it; e is the task's entry in
// the project's change log. The project is read once this instance's
// other changes to it are done (lockProject): call unlock when the change
// committed or failed.
func (s *Store) readTask(ctx context.Context, viewer, tu string) (task *domain.Task, p *domain.Project, e entryAt, unlock func(), err error) {
	ti, err := s.getOne(ctx, taskKey(tu))
	if err != nil {
		return nil, nil, e, nil, err
	}
	if ti == nil {
		return nil, nil, e, nil, errTaskNotFound
	}
	task, err = decodeAs[*domain.Task](ti)
	if err != nil {
		return nil, nil, e, nil, err
	}
	if unlock, err = s.lockProject(ctx, ulidOf(task.ProjectID)); err != nil {
		return nil, nil, e, nil, err
	}
	p, _, _, err = s.access(ctx, viewer, task.ProjectID, nil)
	if err != nil {
		unlock()
		return nil, nil, e, nil, errTaskNotFound
	}
	return task, p, entryOf(ti), unlock, nil
}

func (s *Store) updateTask(ctx context.Context, viewer, tu string, in TaskPatch, apply func(*domain.Task)) (*domain.Task, error) {
	old, p, oldAt, unlock, err := s.readTask(ctx, viewer, tu)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// With expectedVersion, a task that changed between this read and the
	// write fails the write's condition like any other change (errRetry):
	// the next read then finds the other version and answers ECONFLICT. (The
	// condition also fails when only the comment count moved on, which does
	// not change the version: that is no conflict.)
	if in.ExpectedVersion != nil && *in.ExpectedVersion != old.Version {
		return nil, domain.Errorf(domain.ECONFLICT, "expectedVersion %d does not match the task's version %d", *in.ExpectedVersion, old.Version)
	}
	task := *old
	task.Tags = slices.Clone(old.Tags)
	apply(&task)
	task.Version = old.Version + 1
	task.UpdatedAt = s.now()
	pu := ulidOf(task.ProjectID)

	moved := map[domain.TaskStatus]int{}
	if task.Status != old.Status {
		moved[old.Status], moved[task.Status] = -1, 1
	}
	var assign *string
	if task.AssigneeID != nil && (old.AssigneeID == nil || *old.AssigneeID != *task.AssigneeID) {
		assign = task.AssigneeID
	}
	err = s.commitIndexed(ctx, func(t *txn) error {
		t.logTo(pu, p.Seq, task.UpdatedAt)
		e := s.logChange(t, task.ID, oldAt, nil)
		t.put(s.table, withEntry(taskToItem(&task), e), taskAt(old.Version, old.CommentCount), errRetry)
		s.countTasks(t, pu, moved, errProjectNotFound)
		s.memberChecks(t, pu, viewer, assign)
		for _, tag := range old.Tags {
			if !slices.Contains(task.Tags, tag) {
				t.del(s.table, tagKey(tu, tag), nil, nil)
			}
		}
		s.putTagLinks(t, old, &task)
		t.result, t.project = task.ID, task.ProjectID
		t.event = changeEvent(domain.EventTaskUpdated, task.ProjectID, task.ID, viewer, task.UpdatedAt, &task, nil, nil)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &task, nil
}

// putTagLinks writes the tag links that change from the task as it was
// (old, nil: a new task) to the task as it will be: those of tags it gains,
// and all of them when its due date (their sort key) or assignee moves. It
// also changes the tag indexes alike (indexTags). The links of tags the
// task lost are the caller's to delete.
func (s *Store) putTagLinks(t *txn, old, task *domain.Task) {
	for _, tag := range task.Tags {
		if old == nil || !slices.Contains(old.Tags, tag) || linkValue(old) != linkValue(task) {
			t.put(s.table, tagLinkItem(task, tag), nil, nil)
		}
	}
	s.indexTags(t, old, task)
}

// DeleteTask deletes a task with its tag links at once; its comments are
// removed afterwards by the cleanup worker (they cannot be reached without
// the task). Returns EINVALID, ENOTFOUND.
func (s *Store) DeleteTask(ctx context.Context, viewer, id string) error {
	_, err := once(ctx, s, func() (string, error) { return id, s.deleteTaskOnce(ctx, viewer, id) }, replayDeleted())
	return err
}

func (s *Store) deleteTaskOnce(ctx context.Context, viewer, id string) error {
	tu, err := domain.ParseTaskID(id)
	if err != nil {
		return err
	}
	_, err = retryOnChange(ctx, "the task kept changing while it was being deleted; retry", func() (struct{}, error) {
		return struct{}{}, s.deleteTask(ctx, viewer, tu)
	})
	return err
}

func (s *Store) deleteTask(ctx context.Context, viewer, tu string) error {
	task, p, at, unlock, err := s.readTask(ctx, viewer, tu)
	if err != nil {
		return err
	}
	defer unlock()
	asOwner, err := policy.MayDeleteTask(viewer, task, p)
	if err != nil {
		return err
	}
	// The task's comments' ids go into its gone entry of the change log (a
	// sync drops them with it). They are read after the project: the
	// commit's condition on the project's seq (logTo) then proves that no
	// comment was added or deleted since, so the list is whole. (Read
	// beside the task, a list could miss a comment added between the two
	// reads, which no sync would then ever drop.) A task that counts none
	// has none to read.
	var comments []commentRef
	if task.CommentCount > 0 {
		if comments, err = s.commentsOf(ctx, tu); err != nil {
			return err
		}
	}
	pu := ulidOf(task.ProjectID)
	now := s.now()
	err = s.commitIndexed(ctx, func(t *txn) error {
		t.logTo(pu, p.Seq, now)
		t.del(s.table, taskKey(tu), taskAt(task.Version, task.CommentCount), errRetry)
		s.countTasks(t, pu, map[domain.TaskStatus]int{task.Status: -1}, errTaskNotFound)
		if asOwner {
			t.proj.cond = ownerGuard(viewer) // the right rests on the ownership read
		}
		s.memberGuard(t, pu, viewer, errTaskNotFound)
		for _, tag := range task.Tags {
			t.del(s.table, tagKey(tu, tag), nil, nil)
		}
		s.indexTags(t, task, nil)
		s.logGone(t, task.ID, at, comments, nil)
		t.put(s.table, cleanupTaskItem(tu, pu, now), nil, nil)
		t.result, t.project = task.ID, task.ProjectID
		t.event = changeEvent(domain.EventTaskDeleted, task.ProjectID, task.ID, viewer, now, nil, nil, nil)
		return nil
	})
	if err != nil {
		return err
	}
	s.KickCleanup()
	return nil
}
