package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// Now is the clock of the benchmark's server and data: 2026-08-25 12:00 UTC.
// Due dates are spread around it, so "overdue" has a fixed meaning.
var Now = time.Date(2026, 8, 25, 12, 0, 0, 0, time.UTC)

// The shape of one block of the dataset; scale n is n blocks. Every block is
// made from the same random seed, so all blocks have the same shape (only
// their users differ) and scale multiplies every count.
const (
	UsersPerBlock    = 30
	ProjectsPerBlock = 20
	// ViewerProjects is how many projects of block 0 the viewer belongs to
	// (owner of the first three, member of the next seven). The viewer is in
	// no other block, so everything the suite reads has the same shape at
	// every scale.
	ViewerProjects = 10
	// SearchTag is the tag the suite's tasksByTag asks for; about three
	// tasks in ten carry it.
	SearchTag = "urgent"
)

// Viewer is the user the suite runs as: user 0 of block 0.
const Viewer = "b0u00"

// tasksPerProject is the number of tasks of project i%10 of each block:
// 3 to 27, 145 per ten projects, so some task pages are full (first: 20)
// and have more.
var tasksPerProject = []int{24, 8, 15, 3, 18, 11, 27, 6, 13, 20}

// tagOdds is each tag's chance to be on a task (at most four kept), about
// 1.6 tags a task on average, 0 to 4.
var tagOdds = []struct {
	name string
	pct  int
}{{"urgent", 30}, {"bug", 30}, {"frontend", 25}, {"backend", 25}, {"design", 15}, {"docs", 15}, {"ops", 10}, {"research", 10}}

// commentsPerTask is drawn from: 0 to 6, 2.7 on average.
var commentsPerTask = []int{0, 1, 1, 2, 2, 3, 3, 4, 5, 6}

var (
	firstNames = []string{"Ada", "Ben", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Liam", "Mei", "Nils", "Olga"}
	lastNames  = []string{"Alvarez", "Brown", "Chen", "Dubois", "Eriksen", "Fischer", "Garcia", "Hughes", "Ivanova", "Jensen", "Kowalski", "Lopez", "Moreau"}
	verbs      = []string{"Fix", "Write", "Review", "Migrate", "Design", "Test", "Document", "Refactor", "Deploy", "Measure", "Plan", "Clean up"}
	objects    = []string{"the login flow", "the billing page", "search ranking", "the onboarding email", "CSV export", "the mobile menu",
		"rate limiting", "the audit log", "dark mode", "the release checklist", "push notifications", "the API docs", "backups", "the settings page"}
	remarks = []string{"Looks good to me.", "I pushed a first draft, comments welcome.", "Blocked on the design review.",
		"Can we split this into two tasks?", "Reproduced it locally; the fix is small.", "Moved the deadline after talking to the team.",
		"Added screenshots to the ticket.", "This needs a test before we merge.", "Done on staging, waiting for sign-off."}
)

// Fixture is what the suite needs to know about a seeded dataset.
type Fixture struct {
	Scale  int
	Viewer string
	// ProjectID is the viewer's project with the most tasks (27: a full
	// page of 20 and more).
	ProjectID string
	// TaskID is a task in one of the viewer's projects with the most
	// comments (6) and tags.
	TaskID string
	Tag    string

	Users, Projects, Members, Tasks, TagLinks, Comments int
}

// Items is the number of items the dataset puts in the table.
func (f *Fixture) Items() int {
	return f.Users + f.Projects + f.Members + f.Tasks + f.TagLinks + f.Comments
}

// String summarises the dataset's shape.
func (f *Fixture) String() string {
	return fmt.Sprintf("%d×: %d users, %d projects, %d memberships, %d tasks, %d tag links, %d comments = %d items",
		f.Scale, f.Users, f.Projects, f.Members, f.Tasks, f.TagLinks, f.Comments, f.Items())
}

// BuildDataset makes the dataset at the given scale (number of blocks) with
// the store's id generator. It is deterministic but for the ids themselves
// (ULIDs carry randomness; their order is creation order).
func BuildDataset(s *dynamo.Store, scale int) (*dynamo.Dataset, *Fixture) {
	b := s.NewDataset(Now)
	f := &Fixture{Scale: scale, Viewer: Viewer, Tag: SearchTag}
	today := domain.DateOf(Now)
	bestTasks, bestComments, bestTags := -1, -1, -1
	for blk := range scale {
		rng := rand.New(rand.NewPCG(20260825, 1)) // the same for every block
		users := make([]*domain.User, UsersPerBlock)
		for i := range users {
			email := ""
			if i%5 != 4 {
				email = fmt.Sprintf("user%d.%d@example.com", blk, i)
			}
			users[i] = b.User(fmt.Sprintf("b%du%02d", blk, i),
				firstNames[i%len(firstNames)]+" "+lastNames[(i*7)%len(lastNames)], email)
		}
		for p := range ProjectsPerBlock {
			// Members other than the viewer: a random pick of 3 to 7 of the
			// other users; the viewer owns projects 0-2 and joins 3-9.
			others := rng.Perm(UsersPerBlock - 1)[:3+rng.IntN(5)]
			var team []*domain.User // the owner first
			switch {
			case p < 3:
				team = append(team, users[0])
			case p < ViewerProjects:
				team = append(team, users[1+others[0]], users[0])
				others = others[1:]
			}
			for _, o := range others {
				team = append(team, users[1+o])
			}
			desc := ""
			if p%3 != 2 {
				desc = fmt.Sprintf("Work stream %d of team %d: %s and %s.", p, blk, objects[p%len(objects)], objects[(p+5)%len(objects)])
			}
			pr := b.Project(fmt.Sprintf("Project %d-%02d", blk, p), desc, team[0], team[1:]...)
			nTasks := tasksPerProject[p%len(tasksPerProject)]
			for i := range nTasks {
				t := b.Task(pr, verbs[rng.IntN(len(verbs))]+" "+objects[rng.IntN(len(objects))], status(rng),
					due(rng, today), assignee(rng, team), tagsOf(rng)...)
				if rng.IntN(10) < 7 {
					d := fmt.Sprintf("Task %d of %s. %s", i, pr.Name, remarks[rng.IntN(len(remarks))])
					t.Description = &d
				}
				nc := commentsPerTask[rng.IntN(len(commentsPerTask))]
				for range nc {
					b.Comment(t, team[rng.IntN(len(team))], remarks[rng.IntN(len(remarks))])
				}
				if blk == 0 && p < ViewerProjects && (nc > bestComments || nc == bestComments && len(t.Tags) > bestTags) {
					bestComments, bestTags, f.TaskID = nc, len(t.Tags), t.ID
				}
			}
			if blk == 0 && p < ViewerProjects && nTasks > bestTasks {
				bestTasks, f.ProjectID = nTasks, pr.ID
			}
		}
	}
	d := &b.D
	f.Users, f.Projects, f.Members, f.Tasks, f.Comments = len(d.Users), len(d.Projects), len(d.Members), len(d.Tasks), len(d.Comments)
	for _, t := range d.Tasks {
		f.TagLinks += len(t.Tags)
	}
	return d, f
}

// status: a quarter DONE, a fifth IN_PROGRESS, the rest TODO.
func status(rng *rand.Rand) domain.TaskStatus {
	switch r := rng.IntN(100); {
	case r < 25:
		return domain.StatusDone
	case r < 45:
		return domain.StatusInProgress
	}
	return domain.StatusTodo
}

// due: 40% in the past 30 days, 35% today or in the next 60, 25% none.
func due(rng *rand.Rand, today domain.Date) *domain.Date {
	var d domain.Date
	switch r := rng.IntN(100); {
	case r < 40:
		d = today.AddDays(-1 - rng.IntN(30))
	case r < 75:
		d = today.AddDays(rng.IntN(61))
	default:
		return nil
	}
	return &d
}

// assignee: a member of the project for 80% of tasks, nobody for the rest.
func assignee(rng *rand.Rand, team []*domain.User) *domain.User {
	if rng.IntN(10) < 2 {
		return nil
	}
	return team[rng.IntN(len(team))]
}

func tagsOf(rng *rand.Rand) []string {
	var out []string
	for _, t := range tagOdds {
		if rng.IntN(100) < t.pct && len(out) < 4 {
			out = append(out, t.name)
		}
	}
	return out
}

// Seed builds the dataset at scale and writes it with BatchWriteItem.
func Seed(ctx context.Context, s *dynamo.Store, scale int) (*Fixture, error) {
	d, f := BuildDataset(s, scale)
	if err := s.Import(ctx, d); err != nil {
		return nil, fmt.Errorf("seeding %d×: %w", scale, err)
	}
	return f, nil
}
