package dynamo

import (
	"context"
	"errors"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var (
	errProjectNotFound = Errorf(ENOTFOUND, "project not found")
	errTaskNotFound    = Errorf(ENOTFOUND, "task not found")
	errCommentNotFound = Errorf(ENOTFOUND, "comment not found")
	errNoProfile       = Errorf(ENOTFOUND, "your profile does not exist yet; create it with updateProfile")
	errNotAssignable   = Errorf(EINVALID, "assigneeId: the assignee must be a member of the project")
	errOwnerOnly       = Errorf(EFORBIDDEN, "only the project's owner may do this")
	errAlreadyMember   = errors.New("already a member")
)

// ProfileInput creates or updates the viewer's profile.
type ProfileInput struct {
	Name  string
	Email Opt[*string] // left out: unchanged; null: cleared
}

// UpdateProfile creates the viewer's profile on first call and updates it
// afterwards. Returns EINVALID, ECONFLICT.
func (s *Store) UpdateProfile(ctx context.Context, viewer string, in ProfileInput) (*User, error) {
	if err := ValidUserID(viewer); err != nil {
		return nil, err
	}
	n, err := name("name", in.Name)
	if err != nil {
		return nil, err
	}
	var mail *string
	if in.Email.Set {
		if mail, err = email(in.Email.Value); err != nil {
			return nil, err
		}
	}
	return once(ctx, s, func() (*User, error) {
		return retryOnChange(ctx, func() (*User, error) {
			cur, err := s.getOne(ctx, userKey(viewer))
			if err != nil {
				return nil, err
			}
			u := &User{ID: viewer, Name: n, Email: mail, CreatedAt: s.now()}
			cond, rev := absent(), 0
			if cur != nil {
				old, err := decodeAs[*User](cur)
				if err != nil {
					return nil, err
				}
				u.CreatedAt = old.CreatedAt
				if !in.Email.Set {
					u.Email = old.Email
				}
				rev = revOf(cur)
				cond = revIs(rev)
			}
			return u, s.put(ctx, userToItem(u, rev+1), cond, viewer, "")
		})
	}, replaySelf())
}

func revIs(rev int) expression.ConditionBuilder {
	return expression.Name("rev").Equal(expression.Value(rev))
}

// put writes one item on a condition; a failed condition is errRetry. With
// an idempotency key in ctx, the item and the key's record (result, project:
// see txn) are written by one transaction.
func (s *Store) put(ctx context.Context, it item, cond expression.ConditionBuilder, result, project string) error {
	if _, ok := idemFrom(ctx); ok {
		t := txn{result: result, project: project}
		t.put(s.table, it, &cond, errRetry)
		return s.commit(ctx, &t)
	}
	ex, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return internal(err, "building a write")
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: it, ConditionExpression: ex.Condition(),
		ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values()})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return errRetry
	}
	return wrap(err, "saving a change")
}

// retryOnChange runs a read-then-conditional-write until its condition holds, a
// few times at most; then the change is ECONFLICT.
func retryOnChange[T any](ctx context.Context, f func() (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, err := f()
		if !errors.Is(err, errRetry) {
			return v, err
		}
		if attempt >= txnRetries || !backoff(ctx, attempt) {
			var zero T
			return zero, Errorf(ECONFLICT, "a concurrent change won; retry")
		}
	}
}

// ProjectInput creates a project.
type ProjectInput struct {
	Name        string
	Description *string
}

// CreateProject creates a project whose owner is the viewer. Returns
// EINVALID, ENOTFOUND (no profile).
func (s *Store) CreateProject(ctx context.Context, viewer string, in ProjectInput) (*Project, error) {
	return once(ctx, s, func() (*Project, error) { return s.createProject(ctx, viewer, in) }, replayProject)
}

func (s *Store) createProject(ctx context.Context, viewer string, in ProjectInput) (*Project, error) {
	n, err := name("name", in.Name)
	if err != nil {
		return nil, err
	}
	desc, err := text("description", in.Description)
	if err != nil {
		return nil, err
	}
	now := s.now()
	p := &Project{ID: projectID(s.ids.next(now)), Name: n, Description: desc, OwnerID: viewer, CreatedAt: now}
	var t txn
	t.check(s.table, userKey(viewer), exists(), errNoProfile)
	t.put(s.table, projectToItem(p, 1), ptr(absent()), nil)
	t.put(s.table, memberToItem(&Member{ProjectID: p.ID, UserID: viewer, Role: RoleOwner, JoinedAt: now}), ptr(absent()), nil)
	t.result, t.project = p.ID, p.ID
	if err := s.commit(ctx, &t); err != nil {
		return nil, err
	}
	return p, nil
}

func ptr[T any](v T) *T { return &v }

// access reads a project and the viewer's membership of it in one call and
// reports ENOTFOUND when either is missing, and with owner set, EFORBIDDEN
// when the viewer is not its owner.
func (s *Store) access(ctx context.Context, viewer, projectID string, owner bool) (*Project, *Member, item, error) {
	p, err := ParseProjectID(projectID)
	if err != nil {
		return nil, nil, nil, err
	}
	items, err := s.getItems(ctx, []key{projectKey(p), memberKey(p, viewer)})
	if err != nil {
		return nil, nil, nil, err
	}
	if items[0] == nil || items[1] == nil {
		return nil, nil, nil, errProjectNotFound
	}
	proj, err := decodeAs[*Project](items[0])
	if err != nil {
		return nil, nil, nil, err
	}
	m, err := decodeAs[*Member](items[1])
	if err != nil {
		return nil, nil, nil, err
	}
	if owner && proj.OwnerID != viewer {
		return nil, nil, nil, errOwnerOnly
	}
	return proj, m, items[0], nil
}

func ownedBy(viewer string) expression.ConditionBuilder {
	return exists().And(expression.Name("ownerId").Equal(expression.Value(viewer)))
}

// ProjectPatch changes a project; fields left out stay as they are.
type ProjectPatch struct {
	ID          string
	Name        Opt[*string] // null is refused: a project must have a name
	Description Opt[*string] // null clears it
}

// UpdateProject changes a project's name or description; owner only.
// Returns EINVALID, ENOTFOUND, EFORBIDDEN, ECONFLICT.
func (s *Store) UpdateProject(ctx context.Context, viewer string, in ProjectPatch) (*Project, error) {
	var n string
	var desc *string
	var err error
	if in.Name.Set {
		if in.Name.Value == nil {
			return nil, Errorf(EINVALID, "name cannot be cleared")
		}
		if n, err = name("name", *in.Name.Value); err != nil {
			return nil, err
		}
	}
	if in.Description.Set {
		if desc, err = text("description", in.Description.Value); err != nil {
			return nil, err
		}
	}
	return once(ctx, s, func() (*Project, error) {
		return retryOnChange(ctx, func() (*Project, error) {
			p, _, raw, err := s.access(ctx, viewer, in.ID, true)
			if err != nil {
				return nil, err
			}
			if in.Name.Set {
				p.Name = n
			}
			if in.Description.Set {
				p.Description = desc
			}
			rev := revOf(raw)
			return p, s.put(ctx, projectToItem(p, rev+1), ownedBy(viewer).And(revIs(rev)), p.ID, p.ID)
		})
	}, replayProject)
}

// DeleteProject deletes a project; owner only. The project and everything
// under it disappear at once for every reader; its memberships, tasks,
// comments and tag links are removed afterwards by the cleanup worker.
// Returns EINVALID, ENOTFOUND, EFORBIDDEN.
func (s *Store) DeleteProject(ctx context.Context, viewer, id string) error {
	_, err := once(ctx, s, func() (string, error) { return id, s.deleteProject(ctx, viewer, id) }, replayDeleted())
	return err
}

func (s *Store) deleteProject(ctx context.Context, viewer, id string) error {
	p, _, _, err := s.access(ctx, viewer, id, true)
	if err != nil {
		return err
	}
	pu := ulidOf(p.ID)
	var t txn
	t.del(s.table, projectKey(pu), ptr(ownedBy(viewer)), errProjectNotFound)
	t.put(s.table, cleanupToItem(cleanupProject, pu, s.now()), nil, nil)
	t.result, t.project = p.ID, p.ID
	if err := s.commit(ctx, &t); err != nil {
		return err
	}
	s.KickCleanup()
	return nil
}

// AddProjectMember makes a user a member of a project; owner only. Adding a
// member again changes nothing. Returns EINVALID, ENOTFOUND (project or
// user), EFORBIDDEN.
func (s *Store) AddProjectMember(ctx context.Context, viewer, projectID, userID string) (*Project, error) {
	return once(ctx, s, func() (*Project, error) { return s.addProjectMember(ctx, viewer, projectID, userID) }, replayProject)
}

func (s *Store) addProjectMember(ctx context.Context, viewer, projectID, userID string) (*Project, error) {
	if err := ValidUserID(userID); err != nil {
		return nil, err
	}
	p, _, _, err := s.access(ctx, viewer, projectID, true)
	if err != nil {
		return nil, err
	}
	if userID == viewer {
		return p, nil
	}
	pu := ulidOf(p.ID)
	var t txn
	t.check(s.table, projectKey(pu), ownedBy(viewer), errProjectNotFound)
	t.check(s.table, userKey(userID), exists(), Errorf(ENOTFOUND, "user %s not found", clip(userID)))
	t.put(s.table, memberToItem(&Member{ProjectID: p.ID, UserID: userID, Role: RoleMember, JoinedAt: s.now()}),
		ptr(absent()), errAlreadyMember)
	t.result, t.project = p.ID, p.ID
	if err := s.commit(ctx, &t); err != nil && !errors.Is(err, errAlreadyMember) {
		return nil, err
	}
	return p, nil
}

// unassignBatch is how many task updates one transaction of a member's
// removal carries besides the membership itself.
const unassignBatch = 90

// RemoveProjectMember removes a member from a project and unassigns the
// tasks of the project assigned to them; owner only; the owner cannot be
// removed. Returns EINVALID, ENOTFOUND (project, or no such member),
// EFORBIDDEN, ECONFLICT.
func (s *Store) RemoveProjectMember(ctx context.Context, viewer, projectID, userID string) (*Project, error) {
	return once(ctx, s, func() (*Project, error) { return s.removeProjectMember(ctx, viewer, projectID, userID) }, replayProject)
}

func (s *Store) removeProjectMember(ctx context.Context, viewer, projectID, userID string) (*Project, error) {
	if err := ValidUserID(userID); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		p, err := s.removeMember(ctx, viewer, projectID, userID)
		if !errors.Is(err, errRetry) {
			return p, err
		}
		if attempt >= txnRetries || !backoff(ctx, attempt) {
			return nil, Errorf(ECONFLICT, "the member's tasks changed while they were being removed; retry")
		}
	}
}

func (s *Store) removeMember(ctx context.Context, viewer, projectID, userID string) (*Project, error) {
	p, _, _, err := s.access(ctx, viewer, projectID, true)
	if err != nil {
		return nil, err
	}
	if userID == p.OwnerID {
		return nil, Errorf(EINVALID, "userId: the project's owner cannot be removed")
	}
	pu := ulidOf(p.ID)
	mi, err := s.getOne(ctx, memberKey(pu, userID))
	if err != nil {
		return nil, err
	}
	if mi == nil {
		return nil, Errorf(ENOTFOUND, "user %s is not a member of the project", clip(userID))
	}
	var seq struct {
		AssignSeq int `dynamodbav:"assignSeq"`
	}
	if err := attributevalue.UnmarshalMap(mi, &seq); err != nil {
		return nil, internal(err, "decoding an item")
	}
	var tasks []*Task
	for _, open := range []bool{true, false} {
		items, err := s.queryAll(ctx, indexGSI2, attrGSI2PK, assignedPK(userID, open), attrGSI2SK, duePrefix)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if str(it, "projectId") == p.ID {
				t, err := decodeAs[*Task](it)
				if err != nil {
					return nil, err
				}
				tasks = append(tasks, t)
			}
		}
	}
	now := s.now()
	unassign := func(t *txn, task *Task) {
		task.AssigneeID = nil
		task.UpdatedAt = now
		task.Version++
		t.put(s.table, taskToItem(task), ptr(expression.Name("version").Equal(expression.Value(task.Version-1))), errRetry)
	}
	// More tasks than one transaction holds: unassign all but the last batch
	// first. Each batch is atomic; repeating them is harmless.
	for len(tasks) > unassignBatch {
		var t txn
		for _, task := range tasks[:unassignBatch] {
			unassign(&t, task)
		}
		if err := s.commit(ctx, &t); err != nil {
			return nil, err
		}
		tasks = tasks[unassignBatch:]
	}
	var t txn
	t.check(s.table, projectKey(pu), ownedBy(viewer), errProjectNotFound)
	t.del(s.table, memberKey(pu, userID), ptr(expression.Name("assignSeq").Equal(expression.Value(seq.AssignSeq))), errRetry)
	for _, task := range tasks {
		unassign(&t, task)
	}
	t.result, t.project = p.ID, p.ID
	if err := s.commit(ctx, &t); err != nil {
		return nil, err
	}
	return p, nil
}

// TaskInput creates a task.
type TaskInput struct {
	ProjectID   string
	Title       string
	Description *string
	DueDate     *Date
	AssigneeID  *string
	Tags        []string
}

// CreateTask creates a task in a project the viewer is a member of.
// Returns EINVALID (including an assignee who is no member), ENOTFOUND.
func (s *Store) CreateTask(ctx context.Context, viewer string, in TaskInput) (*Task, error) {
	return once(ctx, s, func() (*Task, error) { return s.createTask(ctx, viewer, in) }, replayTask)
}

func (s *Store) createTask(ctx context.Context, viewer string, in TaskInput) (*Task, error) {
	pu, err := ParseProjectID(in.ProjectID)
	if err != nil {
		return nil, err
	}
	title, err := name("title", in.Title)
	if err != nil {
		return nil, err
	}
	desc, err := text("description", in.Description)
	if err != nil {
		return nil, err
	}
	tg, err := tags(in.Tags)
	if err != nil {
		return nil, err
	}
	if in.AssigneeID != nil {
		if err := ValidUserID(*in.AssigneeID); err != nil {
			return nil, Errorf(EINVALID, "assigneeId: %s", ErrorMessage(err))
		}
	}
	now := s.now()
	task := &Task{ID: taskID(s.ids.next(now)), ProjectID: projectID(pu), Title: title, Description: desc,
		Status: StatusTodo, DueDate: in.DueDate, AssigneeID: in.AssigneeID, Tags: tg, CreatedAt: now, UpdatedAt: now,
		Version: 1}
	var t txn
	t.check(s.table, projectKey(pu), exists(), errProjectNotFound)
	s.memberChecks(&t, pu, viewer, in.AssigneeID)
	t.put(s.table, taskToItem(task), ptr(absent()), nil)
	for _, name := range tg {
		t.put(s.table, tagLinkItem(task, name), nil, nil)
	}
	t.result, t.project = task.ID, task.ProjectID
	if err := s.commit(ctx, &t); err != nil {
		return nil, err
	}
	return task, nil
}

// memberChecks adds the checks that the viewer is a member and, when a task
// is being assigned to someone, that they are a member too; an assignment
// bumps the assignee's assignSeq so that a concurrent removal notices it.
func (s *Store) memberChecks(t *txn, pu, viewer string, assignee *string) {
	bump := expression.Add(expression.Name("assignSeq"), expression.Value(1))
	switch {
	case assignee == nil:
		t.check(s.table, memberKey(pu, viewer), exists(), errProjectNotFound)
	case *assignee == viewer:
		t.update(s.table, memberKey(pu, viewer), bump, ptr(exists()), errProjectNotFound)
	default:
		t.check(s.table, memberKey(pu, viewer), exists(), errProjectNotFound)
		t.update(s.table, memberKey(pu, *assignee), bump, ptr(exists()), errNotAssignable)
	}
}

// TaskPatch changes a task; fields left out stay as they are, fields given
// as null are cleared.
type TaskPatch struct {
	ID              string
	Title           Opt[*string]
	Description     Opt[*string]
	Status          Opt[*TaskStatus]
	DueDate         Opt[*Date]
	AssigneeID      Opt[*string]
	Tags            Opt[[]string] // the whole new set; null clears it
	ExpectedVersion *int
}

// UpdateTask applies a patch to a task and increases its version by one.
// With ExpectedVersion, a task at another version is not changed (ECONFLICT).
// Returns EINVALID, ENOTFOUND, ECONFLICT.
func (s *Store) UpdateTask(ctx context.Context, viewer string, in TaskPatch) (*Task, error) {
	return once(ctx, s, func() (*Task, error) { return s.updateTaskOnce(ctx, viewer, in) }, replayTask)
}

func (s *Store) updateTaskOnce(ctx context.Context, viewer string, in TaskPatch) (*Task, error) {
	tu, err := ParseTaskID(in.ID)
	if err != nil {
		return nil, err
	}
	apply, err := taskPatcher(in)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		task, err := s.updateTask(ctx, viewer, tu, in, apply)
		if !errors.Is(err, errRetry) {
			return task, err
		}
		if attempt >= txnRetries || !backoff(ctx, attempt) {
			return nil, Errorf(ECONFLICT, "the task kept changing while it was being updated; retry")
		}
	}
}

// taskPatcher validates a patch and returns the function that applies it.
func taskPatcher(in TaskPatch) (func(*Task), error) {
	var title string
	var desc *string
	var tg []string
	var err error
	if in.Title.Set {
		if in.Title.Value == nil {
			return nil, Errorf(EINVALID, "title cannot be cleared")
		}
		if title, err = name("title", *in.Title.Value); err != nil {
			return nil, err
		}
	}
	if in.Description.Set {
		if desc, err = text("description", in.Description.Value); err != nil {
			return nil, err
		}
	}
	if in.Status.Set && (in.Status.Value == nil || !in.Status.Value.Valid()) {
		return nil, Errorf(EINVALID, "status cannot be cleared")
	}
	if in.AssigneeID.Set && in.AssigneeID.Value != nil {
		if err := ValidUserID(*in.AssigneeID.Value); err != nil {
			return nil, Errorf(EINVALID, "assigneeId: %s", ErrorMessage(err))
		}
	}
	if in.Tags.Set {
		if tg, err = tags(in.Tags.Value); err != nil {
			return nil, err
		}
	}
	return func(t *Task) {
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
// reports ENOTFOUND unless the viewer may see it.
func (s *Store) readTask(ctx context.Context, viewer, tu string) (*Task, *Project, error) {
	ti, err := s.getOne(ctx, taskKey(tu))
	if err != nil {
		return nil, nil, err
	}
	if ti == nil {
		return nil, nil, errTaskNotFound
	}
	task, err := decodeAs[*Task](ti)
	if err != nil {
		return nil, nil, err
	}
	p, _, _, err := s.access(ctx, viewer, task.ProjectID, false)
	if err != nil {
		return nil, nil, errTaskNotFound
	}
	return task, p, nil
}

func (s *Store) updateTask(ctx context.Context, viewer, tu string, in TaskPatch, apply func(*Task)) (*Task, error) {
	old, _, err := s.readTask(ctx, viewer, tu)
	if err != nil {
		return nil, err
	}
	versionFail := errRetry
	if in.ExpectedVersion != nil {
		if *in.ExpectedVersion != old.Version {
			return nil, Errorf(ECONFLICT, "expectedVersion %d does not match the task's version %d", *in.ExpectedVersion, old.Version)
		}
		versionFail = Errorf(ECONFLICT, "the task changed since version %d", *in.ExpectedVersion)
	}
	task := *old
	task.Tags = slices.Clone(old.Tags)
	apply(&task)
	task.Version = old.Version + 1
	task.UpdatedAt = s.now()
	pu := ulidOf(task.ProjectID)

	var t txn
	t.put(s.table, taskToItem(&task), ptr(expression.Name("version").Equal(expression.Value(old.Version))), versionFail)
	t.check(s.table, projectKey(pu), exists(), errProjectNotFound)
	var assign *string
	if task.AssigneeID != nil && (old.AssigneeID == nil || *old.AssigneeID != *task.AssigneeID) {
		assign = task.AssigneeID
	}
	s.memberChecks(&t, pu, viewer, assign)
	dueChanged := !sameDate(old.DueDate, task.DueDate)
	for _, name := range old.Tags {
		if !slices.Contains(task.Tags, name) {
			t.del(s.table, tagKey(tu, name), nil, nil)
		}
	}
	for _, name := range task.Tags {
		if dueChanged || !slices.Contains(old.Tags, name) {
			t.put(s.table, tagLinkItem(&task, name), nil, nil)
		}
	}
	t.result, t.project = task.ID, task.ProjectID
	if err := s.commit(ctx, &t); err != nil {
		return nil, err
	}
	return &task, nil
}

func sameDate(a, b *Date) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// DeleteTask deletes a task with its tag links at once; its comments are
// removed afterwards by the cleanup worker (they cannot be reached without
// the task). Returns EINVALID, ENOTFOUND.
func (s *Store) DeleteTask(ctx context.Context, viewer, id string) error {
	_, err := once(ctx, s, func() (string, error) { return id, s.deleteTaskOnce(ctx, viewer, id) }, replayDeleted())
	return err
}

func (s *Store) deleteTaskOnce(ctx context.Context, viewer, id string) error {
	tu, err := ParseTaskID(id)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := s.deleteTask(ctx, viewer, tu)
		if !errors.Is(err, errRetry) {
			return err
		}
		if attempt >= txnRetries || !backoff(ctx, attempt) {
			return Errorf(ECONFLICT, "the task kept changing while it was being deleted; retry")
		}
	}
}

func (s *Store) deleteTask(ctx context.Context, viewer, tu string) error {
	task, _, err := s.readTask(ctx, viewer, tu)
	if err != nil {
		return err
	}
	pu := ulidOf(task.ProjectID)
	var t txn
	t.del(s.table, taskKey(tu), ptr(expression.Name("version").Equal(expression.Value(task.Version))), errRetry)
	t.check(s.table, projectKey(pu), exists(), errTaskNotFound)
	t.check(s.table, memberKey(pu, viewer), exists(), errTaskNotFound)
	for _, name := range task.Tags {
		t.del(s.table, tagKey(tu, name), nil, nil)
	}
	t.put(s.table, cleanupToItem(cleanupTask, tu, s.now()), nil, nil)
	t.result, t.project = task.ID, task.ProjectID
	if err := s.commit(ctx, &t); err != nil {
		return err
	}
	s.KickCleanup()
	return nil
}

// CommentInput adds a comment to a task.
type CommentInput struct {
	TaskID string
	Body   string
}

// AddComment adds the viewer's comment to a task they may see. Returns
// EINVALID, ENOTFOUND.
func (s *Store) AddComment(ctx context.Context, viewer string, in CommentInput) (*Comment, error) {
	return once(ctx, s, func() (*Comment, error) { return s.addComment(ctx, viewer, in) }, replayComment)
}

func (s *Store) addComment(ctx context.Context, viewer string, in CommentInput) (*Comment, error) {
	tu, err := ParseTaskID(in.TaskID)
	if err != nil {
		return nil, err
	}
	body, err := text("body", &in.Body)
	if err != nil {
		return nil, err
	}
	if body == nil {
		return nil, Errorf(EINVALID, "body must have 1 to %d characters after trimming", MaxTextLen)
	}
	task, _, err := s.readTask(ctx, viewer, tu)
	if err != nil {
		return nil, err
	}
	now := s.now()
	c := &Comment{ID: commentID(tu, s.ids.next(now)), TaskID: task.ID, AuthorID: viewer, Body: *body, CreatedAt: now}
	pu := ulidOf(task.ProjectID)
	var t txn
	t.check(s.table, taskKey(tu), exists(), errTaskNotFound)
	t.check(s.table, projectKey(pu), exists(), errTaskNotFound)
	t.check(s.table, memberKey(pu, viewer), exists(), errTaskNotFound)
	t.put(s.table, commentToItem(c), ptr(absent()), nil)
	t.result, t.project = c.ID, task.ProjectID
	if err := s.commit(ctx, &t); err != nil {
		return nil, err
	}
	return c, nil
}

// DeleteComment deletes a comment; its author or the project's owner only.
// Returns EINVALID, ENOTFOUND, EFORBIDDEN.
func (s *Store) DeleteComment(ctx context.Context, viewer, id string) error {
	_, err := once(ctx, s, func() (string, error) { return id, s.deleteComment(ctx, viewer, id) }, replayDeleted())
	return err
}

func (s *Store) deleteComment(ctx context.Context, viewer, id string) error {
	tu, cu, err := parseCommentID(id)
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
	c, err := decodeAs[*Comment](items[0])
	if err != nil {
		return err
	}
	task, p, err := s.readTask(ctx, viewer, tu)
	if err != nil {
		return errCommentNotFound
	}
	pu := ulidOf(task.ProjectID)
	projectCond := exists()
	if c.AuthorID != viewer {
		if p.OwnerID != viewer {
			return Errorf(EFORBIDDEN, "only the comment's author or the project's owner may delete it")
		}
		projectCond = ownedBy(viewer)
	}
	var t txn
	t.del(s.table, commentKey(tu, cu), ptr(exists()), errCommentNotFound)
	t.check(s.table, taskKey(tu), exists(), errCommentNotFound)
	t.check(s.table, projectKey(pu), projectCond, errCommentNotFound)
	t.check(s.table, memberKey(pu, viewer), exists(), errCommentNotFound)
	t.result, t.project = id, task.ProjectID
	return s.commit(ctx, &t)
}
