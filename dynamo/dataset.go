package dynamo

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// Dataset is a set of objects to load in bulk, e.g. demo data.
type Dataset struct {
	Users    []*domain.User
	Projects []*domain.Project
	Members  []*domain.Member
	Tasks    []*domain.Task
	Comments []*domain.Comment
}

// Import writes a dataset with BatchWriteItem (no transactions, so it also
// runs on stores without them), with the counters of its projects and
// tasks counted from the dataset and their change logs built (recount); the
// projects' positions are set on d's projects. It trusts its input: it is
// for data made by this program, not by clients. Returns EUNAVAILABLE,
// EINTERNAL.
func (s *Store) Import(ctx context.Context, d *Dataset) error {
	var items []item
	add := func(it item) { items = append(items, it) }
	for _, u := range d.Users {
		add(userToItem(u, 0))
	}
	projects := make([]item, len(d.Projects))
	for i, p := range d.Projects {
		projects[i] = projectToItem(p, 0)
		add(projects[i])
	}
	for _, m := range d.Members {
		add(memberToItem(m))
	}
	for _, t := range d.Tasks {
		add(taskToItem(t))
		for _, tag := range t.Tags {
			add(tagLinkItem(t, tag))
		}
	}
	for _, c := range d.Comments {
		add(commentToItem(c))
	}
	if err := s.PutItems(ctx, items); err != nil {
		return err
	}
	// The copies of members whose profiles d does not hold (written
	// before): each profile read, its map completed and written whole
	// (BatchWriteItem: no transactions; Import is no concurrent writer's).
	in := make(map[string]bool, len(d.Users))
	for _, u := range d.Users {
		in[u.ID] = true
	}
	names := make(map[string]string, len(d.Projects)) // project id → its copy's name
	for _, p := range d.Projects {
		names[p.ID] = copyOf(p.Name)
	}
	more := map[string]map[string]types.AttributeValue{} // user → copies to add
	for _, m := range d.Members {
		if name, ok := names[m.ProjectID]; ok && !in[m.UserID] {
			if more[m.UserID] == nil {
				more[m.UserID] = map[string]types.AttributeValue{}
			}
			more[m.UserID][ulidOf(m.ProjectID)] = &types.AttributeValueMemberS{Value: name}
		}
	}
	var puts []types.WriteRequest
	for u, add := range more {
		it, err := s.getOne(ctx, userKey(u))
		if err != nil {
			return err
		}
		if it == nil {
			continue
		}
		m, _ := it[attrProjects].(*types.AttributeValueMemberM)
		all := map[string]types.AttributeValue{keepCopy: &types.AttributeValueMemberS{Value: ""}}
		if m != nil {
			maps.Copy(all, m.Value)
		}
		maps.Copy(all, add)
		it[attrProjects] = &types.AttributeValueMemberM{Value: all}
		puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	if err := s.batchWrite(ctx, puts); err != nil {
		return err
	}
	for i, p := range d.Projects { // the positions of their change logs, as loaded (changeLogItems)
		p.Seq, p.ProjectSeq = numberOf(projects[i], attrSeq), numberOf(projects[i], attrProjectSeq)
	}
	for _, u := range d.Users { // their copies, as loaded (profileCopies)
		u.Projects = map[string]string{}
		for _, m := range d.Members {
			if name, ok := names[m.ProjectID]; ok && m.UserID == u.ID {
				u.Projects[m.ProjectID] = name
			}
		}
	}
	return nil
}

// DatasetBuilder makes a Dataset with ids issued like the server's.
type DatasetBuilder struct {
	s   *Store
	now time.Time
	D   Dataset
}

// NewDataset starts a dataset whose objects are created at now.
func (s *Store) NewDataset(now time.Time) *DatasetBuilder {
	return &DatasetBuilder{s: s, now: now.UTC()}
}

// User adds a user.
func (b *DatasetBuilder) User(id, name, email string) *domain.User {
	u := &domain.User{ID: id, Name: name, CreatedAt: b.now}
	if email != "" {
		u.Email = &email
	}
	b.D.Users = append(b.D.Users, u)
	return u
}

// Project adds a project owned by owner, with the other users as members.
func (b *DatasetBuilder) Project(name, desc string, owner *domain.User, members ...*domain.User) *domain.Project {
	p := &domain.Project{ID: domain.ProjectIDOf(b.s.ids.next(b.now)), Name: name, OwnerID: owner.ID, CreatedAt: b.now}
	if desc != "" {
		p.Description = &desc
	}
	b.D.Projects = append(b.D.Projects, p)
	b.D.Members = append(b.D.Members, &domain.Member{ProjectID: p.ID, UserID: owner.ID, Role: domain.RoleOwner, JoinedAt: b.now})
	for _, m := range members {
		b.D.Members = append(b.D.Members, &domain.Member{ProjectID: p.ID, UserID: m.ID, Role: domain.RoleMember, JoinedAt: b.now})
	}
	return p
}

// Task adds a task (counted in p's TaskCounts); due is nil for none,
// assignee nil for nobody.
func (b *DatasetBuilder) Task(p *domain.Project, title string, status domain.TaskStatus, due *domain.Date, assignee *domain.User, tags ...string) *domain.Task {
	t := &domain.Task{ID: domain.TaskIDOf(b.s.ids.next(b.now)), ProjectID: p.ID, Title: title, Status: status, DueDate: due,
		Tags: tags, CreatedAt: b.now, UpdatedAt: b.now, Version: 1}
	if t.Tags == nil {
		t.Tags = []string{}
	}
	if assignee != nil {
		t.AssigneeID = &assignee.ID
	}
	p.TaskCounts.Add(status, 1) // as Import will count it
	b.D.Tasks = append(b.D.Tasks, t)
	return t
}

// Comment adds a comment by author on t (counted in its CommentCount).
func (b *DatasetBuilder) Comment(t *domain.Task, author *domain.User, body string) *domain.Comment {
	c := &domain.Comment{ID: domain.CommentIDOf(ulidOf(t.ID), b.s.ids.next(b.now)), TaskID: t.ID, AuthorID: author.ID, Body: body, CreatedAt: b.now}
	t.CommentCount++
	b.D.Comments = append(b.D.Comments, c)
	return c
}

// Demo returns the demo dataset: four users, three projects (one that the
// demo user "alice" is no member of), tasks due in the past, today, later
// and never, in every status, with tags and comments.
func (s *Store) Demo(now time.Time) *Dataset {
	b := s.NewDataset(now)
	today := domain.DateOf(now)
	day := func(n int) *domain.Date { d := today.AddDays(n); return &d }
	alice := b.User("alice", "Alice Example", "alice@example.com")
	bob := b.User("bob", "Bob Builder", "bob@example.com")
	carol := b.User("carol", "Carol Chen", "")
	dave := b.User("dave", "Dave Diaz", "dave@example.com")

	web := b.Project("Website relaunch", "New marketing site and blog", alice, bob, carol)
	app := b.Project("Mobile app", "iOS and Android clients", bob, alice, dave)
	lab := b.Project("Research", "Carol's experiments (alice is not a member)", carol, dave)

	t1 := b.Task(web, "Write the landing page copy", domain.StatusInProgress, day(-3), alice, "copy", "urgent")
	t2 := b.Task(web, "Fix the broken signup form", domain.StatusTodo, day(-1), bob, "bug", "frontend", "urgent")
	b.Task(web, "Pick a colour palette", domain.StatusDone, day(-10), carol, "design")
	b.Task(web, "Set up analytics", domain.StatusTodo, day(7), alice, "frontend")
	b.Task(web, "Migrate the blog", domain.StatusTodo, nil, nil, "backend")
	b.Task(web, "Launch announcement", domain.StatusTodo, day(21), alice)
	t7 := b.Task(app, "Crash on start on Android 12", domain.StatusInProgress, day(-2), alice, "bug", "android", "urgent")
	b.Task(app, "Push notifications", domain.StatusTodo, day(14), dave, "backend")
	b.Task(app, "App store screenshots", domain.StatusDone, day(-5), alice, "design")
	b.Task(app, "Dark mode", domain.StatusTodo, nil, bob, "frontend", "design")
	b.Task(app, "Offline sync", domain.StatusTodo, day(0), dave, "backend")
	b.Task(lab, "Benchmark the new model", domain.StatusTodo, day(-4), dave, "urgent")
	b.Task(lab, "Write up results", domain.StatusTodo, day(30), carol, "copy")

	b.Comment(t1, alice, "First draft is in the shared doc.")
	b.Comment(t1, bob, "Looks good, a few notes inline.")
	b.Comment(t2, carol, "Reproduced on Safari only.")
	b.Comment(t2, bob, "Fix is ready for review.")
	b.Comment(t7, dave, "Stack trace attached to the ticket.")
	for i := range 3 {
		b.Comment(t7, alice, fmt.Sprintf("Update %d: still investigating.", i+1))
	}
	return &b.D
}
