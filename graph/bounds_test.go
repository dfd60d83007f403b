package graph_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// Every item a user's input can grow has a bound (docs/security.md,
// "Stored items"); these tests drive each to it, with small caps.

const (
	bCreateProject = `mutation($n: String!) { createProject(input: {name: $n}) { id } }`
	bAddMember     = `mutation($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { id } }`
	bAddComment    = `mutation($t: ID!, $b: String!) { addComment(input: {taskId: $t, body: $b}) { id } }`
)

// longName is a name of 200 four-byte characters (800 bytes of UTF-8),
// the largest a name may be.
var longName = strings.Repeat("😀", 200)

// TestMembershipsStopAtTheCap: a user is a member of at most MembershipCap
// projects (3 here). createProject past it and addProjectMember of a user
// at it answer BAD_USER_INPUT naming the limit and change nothing; a user
// who leaves a project has room again; six racing adds of one user fill
// exactly the room left (the cap is a condition of the transaction).
func TestMembershipsStopAtTheCap(t *testing.T) {
	e := testenv.New(t)
	e.Store.MembershipCap = 3
	s := e.MustSeed(t)
	var made struct{ CreateProject struct{ ID string } }
	e.MustQuery(t, "alice", bCreateProject, map[string]any{"n": longName}, &made) // alice: Website, Mobile app, this one
	before := e.Dump(t)
	err := e.MustFail(t, "alice", "BAD_USER_INPUT", bCreateProject, map[string]any{"n": "one too many"})
	if !strings.Contains(err.Message, "you are a member of 3 projects") {
		t.Errorf("createProject past the cap: %q", err.Message)
	}
	// carol: Website, Research, and the Mobile app now.
	e.MustQuery(t, "bob", bAddMember, map[string]any{"p": s.Project("Mobile app").ID, "u": "carol"}, nil)
	before = e.Dump(t)
	err = e.MustFail(t, "alice", "BAD_USER_INPUT", bAddMember, map[string]any{"p": made.CreateProject.ID, "u": "carol"})
	if !strings.Contains(err.Message, "carol is a member of 3 projects") {
		t.Errorf("addProjectMember of a user at the cap: %q", err.Message)
	}
	if e.Dump(t) != before {
		t.Error("a refusal at the cap changed the table")
	}
	// Adding a member again changes nothing, at the cap too.
	e.MustQuery(t, "alice", bAddMember, map[string]any{"p": s.Project("Website relaunch").ID, "u": "carol"}, nil)
	// carol leaves one: room for one.
	e.MustQuery(t, "carol", mutLeave, map[string]any{"p": s.Project("Website relaunch").ID}, nil)
	e.MustQuery(t, "alice", bAddMember, map[string]any{"p": made.CreateProject.ID, "u": "carol"}, nil)

	// eve (no project yet) added to six projects at once: three succeed.
	var projects []string
	for i := range 6 {
		e.Store.MembershipCap = 0 // the owners' own room
		var d struct{ CreateProject struct{ ID string } }
		e.MustQuery(t, "dave", bCreateProject, map[string]any{"n": fmt.Sprint("race ", i)}, &d)
		projects = append(projects, d.CreateProject.ID)
	}
	e.Store.MembershipCap = 3
	var wg sync.WaitGroup
	codes := make([]string, len(projects))
	for i, p := range projects {
		wg.Go(func() {
			res := e.Query(t, "dave", bAddMember, map[string]any{"p": p, "u": "eve"})
			if len(res.Errors) > 0 {
				codes[i] = res.Errors[0].Code()
			}
		})
	}
	wg.Wait()
	ok, full := 0, 0
	for _, c := range codes {
		switch c {
		case "":
			ok++
		case "BAD_USER_INPUT":
			full++
		default:
			t.Errorf("a racing add answered %s", c)
		}
	}
	var me struct {
		Me struct {
			Projects struct{ Nodes []struct{ ID string } }
		}
	}
	e.MustQuery(t, "eve", `{ me { projects(first: 10) { nodes { id } } } }`, nil, &me)
	if ok != 3 || full != 3 || len(me.Me.Projects.Nodes) != 3 {
		t.Errorf("six racing adds: %d added, %d refused, eve in %d projects; want 3, 3, 3", ok, full, len(me.Me.Projects.Nodes))
	}
	if v := testenv.CheckTable(e.Items(t)); len(v) > 0 {
		t.Errorf("the table:\n%s", strings.Join(v, "\n"))
	}
}

// TestAProfileAtTheDefaultCapStaysSmall: a user in DefaultMembershipCap
// projects has a profile well under DynamoDB's 400 KB whatever the
// projects' names: a copy holds a name of at most 64 bytes (a longer one
// is copied as "", and a task's project { name } reads the project); one
// more membership is refused before any write.
func TestAProfileAtTheDefaultCapStaysSmall(t *testing.T) {
	e := testenv.New(t)
	e.MustQuery(t, "ann", `mutation { updateProfile(input: {name: "Ann"}) { id } }`, nil, nil)
	ctx := context.Background()
	longest := strings.Repeat("😀", 16) // 64 bytes: the longest name a copy holds
	var last *domain.Project
	for i := range dynamo.DefaultMembershipCap {
		name := longest
		if i%2 == 0 {
			name = longName // copied as ""
		}
		p, err := e.Store.CreateProject(ctx, "ann", domain.ProjectInput{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		last = p
	}
	err := e.MustFail(t, "ann", "BAD_USER_INPUT", bCreateProject, map[string]any{"n": longName})
	if !strings.Contains(err.Message, fmt.Sprint(dynamo.DefaultMembershipCap, " projects")) {
		t.Errorf("%q", err.Message)
	}
	size := 0
	for _, it := range rawItems(t, e) {
		if typ, _ := it["type"].(*types.AttributeValueMemberS); typ != nil && typ.Value == "USER" {
			size = client.ItemSize(it)
		}
	}
	if size == 0 || size > 60*1024 {
		t.Errorf("the full profile is %d bytes, want under 60 KB", size)
	}
	t.Logf("a profile with %d copies: %d bytes", dynamo.DefaultMembershipCap, size)
	// A task's project { id name } comes from the copy, or from the project
	// when its name is too long for one.
	for _, name := range []string{longest, longName} {
		e.MustQuery(t, "ann", `mutation($p: ID!, $n: String!) { updateProject(input: {id: $p, name: $n}) { id } }`, map[string]any{"p": last.ID, "n": name}, nil)
		var d struct {
			CreateTask struct{ Project struct{ ID, Name string } }
		}
		e.MustQuery(t, "ann", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "t"}) { project { id name } } }`, map[string]any{"p": last.ID}, &d)
		if d.CreateTask.Project.Name != name {
			t.Errorf("a task's project named %d bytes: %q", len(name), d.CreateTask.Project.Name)
		}
	}
}

// TestTooLargeIsAClientError: where DynamoDB itself refuses an item as too
// large (here a deleted task's gone entry listing 7,000 comments, a comment
// cap raised far past what an entry holds), the answer is TOO_LARGE,
// documented, and nothing is written; never INTERNAL_SERVER_ERROR.
func TestTooLargeIsAClientError(t *testing.T) {
	e := testenv.New(t)
	e.Store.CommentCap = 10_000
	b := e.Store.NewDataset(testenv.Now)
	ann := b.User("ann", "Ann", "")
	p := b.Project("P", "", ann)
	task := b.Task(p, "T", domain.StatusTodo, nil, nil)
	for i := range 7000 {
		b.Comment(task, ann, fmt.Sprint(i))
	}
	e.MustImport(t, &b.D)
	before := e.Dump(t)
	res := e.Query(t, "ann", `mutation($t: ID!) { deleteTask(id: $t) }`, map[string]any{"t": task.ID})
	if len(res.Errors) != 1 || res.Errors[0].Code() != codes.TooLarge || !strings.Contains(res.Errors[0].Message, "400 KB") {
		t.Fatalf("%+v, want TOO_LARGE", res.Errors)
	}
	if e.Dump(t) != before {
		t.Error("a refused deleteTask wrote")
	}
}

// rawItems scans the Env's table: its items as DynamoDB holds them.
func rawItems(t *testing.T, e *testenv.Env) []map[string]types.AttributeValue {
	t.Helper()
	var all []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(e.Client, &dynamodb.ScanInput{TableName: aws.String(e.Store.Table())})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, out.Items...)
	}
	return all
}

// TestCommentsStopAtTheCap: a task has at most CommentCap comments (3
// here): the next is BAD_USER_INPUT naming the limit; one deleted makes
// room; the task's deletion lists them all in its gone entry, and a
// member's sync tombstones each.
func TestCommentsStopAtTheCap(t *testing.T) {
	e := testenv.New(t)
	e.Store.CommentCap = 3
	s := e.MustSeed(t)
	task := s.Task("Set up analytics") // no comments yet
	bob := newReplica("bob")
	bob.sync(t, e, 100)
	var ids []string
	for i := range 3 {
		var d struct{ AddComment struct{ ID string } }
		e.MustQuery(t, "bob", bAddComment, map[string]any{"t": task.ID, "b": fmt.Sprint("comment ", i)}, &d)
		ids = append(ids, d.AddComment.ID)
	}
	before := e.Dump(t)
	err := e.MustFail(t, "alice", "BAD_USER_INPUT", bAddComment, map[string]any{"t": task.ID, "b": "one too many"})
	if !strings.Contains(err.Message, "at most 3 comments") {
		t.Errorf("%q", err.Message)
	}
	if e.Dump(t) != before {
		t.Error("a refused comment wrote")
	}
	e.MustQuery(t, "bob", `mutation($c: ID!) { deleteComment(id: $c) }`, map[string]any{"c": ids[0]}, nil)
	var d struct{ AddComment struct{ ID string } }
	e.MustQuery(t, "alice", bAddComment, map[string]any{"t": task.ID, "b": "room again"}, &d)
	bob.sync(t, e, 100)
	e.MustQuery(t, "alice", `mutation($t: ID!) { deleteTask(id: $t) }`, map[string]any{"t": task.ID}, nil)
	var tombs []string
	for _, p := range bob.sync(t, e, 100) {
		for _, tb := range p.Tombstones {
			tombs = append(tombs, tb.NodeID)
		}
	}
	for _, id := range append(ids[1:], d.AddComment.ID, task.ID) {
		if !strings.Contains(strings.Join(tombs, " "), id) {
			t.Errorf("bob's sync after the task's deletion: %v, without %s", tombs, id)
		}
	}
	bob.mustEqualFullRead(t, e)
}

// TestALongAliasIsIdempotent: the record of a mutation sent with an
// Idempotency-Key is keyed by its alias, which may be as long as a body
// allows; past DynamoDB's 1 KB sort key it is keyed by its digest, and a
// retry still answers like the first call.
func TestALongAliasIsIdempotent(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	alias := "a" + strings.Repeat("b", 3000)
	doc := fmt.Sprintf(`mutation($p: ID!) { %s: createTask(input: {projectId: $p, title: "once"}) { id } }`, alias)
	var first string
	for i := range 2 {
		res := e.Send(t, map[string]any{"query": doc, "variables": map[string]any{"p": s.Project("Website relaunch").ID}},
			e.As("alice"), testenv.Header(pipeline.IdempotencyHeader, "K1")).Decode(t)
		if len(res.Errors) > 0 {
			t.Fatalf("call %d: %+v", i+1, res.Errors)
		}
		if i == 0 {
			first = string(res.Data)
		} else if string(res.Data) != first {
			t.Errorf("the retry answered %s, want %s", res.Data, first)
		}
	}
	if n := strings.Count(e.Dump(t), `"once"`); n != 1 {
		t.Errorf("%d tasks made, want 1", n)
	}
}

// TestATagIndexIsBoundedInBytes: a tag index counts its entries in units
// of 128 bytes and one for the title (an entry whose assignee's id is 128
// four-byte characters is six, an ordinary one two), so an index at its cap is at most TagIndexCap × 128 bytes however
// long the ids; the write that would pass it marks the index full, and
// tasksByTag answers alike through the tag links.
func TestATagIndexIsBoundedInBytes(t *testing.T) {
	e := testenv.New(t)
	e.Store.TagIndexCap = 16
	s := e.MustSeed(t)
	web := s.Project("Website relaunch")
	long := strings.Repeat("𠀀", 128) // 512 bytes: the longest user id
	e.MustQuery(t, long, `mutation { updateProfile(input: {name: "Long"}) { id } }`, nil, nil)
	e.MustQuery(t, "alice", bAddMember, map[string]any{"p": web.ID, "u": long}, nil)
	index := func() (units int, full bool) {
		for _, it := range rawItems(t, e) {
			if sk, _ := it["SK"].(*types.AttributeValueMemberS); sk != nil && sk.Value == "TAGS#bounded" {
				_, full = it["full"]
				if n, ok := it["entries"].(*types.AttributeValueMemberN); ok {
					fmt.Sscan(n.Value, &units)
				}
				return units, full
			}
		}
		t.Fatal("no index of the tag")
		return 0, false
	}
	var ids []string
	mk := func(assignee string) {
		var d struct{ CreateTask struct{ ID string } }
		e.MustQuery(t, "alice", `mutation($p: ID!, $a: ID) { createTask(input: {projectId: $p, title: "b", assigneeId: $a, tags: ["bounded"]}) { id } }`,
			map[string]any{"p": web.ID, "a": assignee}, &d)
		ids = append(ids, d.CreateTask.ID)
	}
	mk("bob") // two units
	mk(long)  // six
	mk(long)  // six: 14 of 16
	if units, full := index(); units != 14 || full {
		t.Fatalf("after three tasks: %d units, full %v; want 14, not full", units, full)
	}
	mk("carol") // two: 16, the cap
	mk(long)    // six more: past it, marked full
	if _, full := index(); !full {
		t.Fatal("the index is not marked full past its cap")
	}
	var d struct {
		TasksByTag struct{ Nodes []struct{ ID string } }
	}
	e.MustQuery(t, "alice", `{ tasksByTag(tag: "bounded", first: 10) { nodes { id } } }`, nil, &d)
	if len(d.TasksByTag.Nodes) != len(ids) {
		t.Errorf("tasksByTag lists %d tasks, want %d", len(d.TasksByTag.Nodes), len(ids))
	}
	if v := testenv.CheckTable(e.Items(t)); len(v) > 0 {
		t.Errorf("the table:\n%s", strings.Join(v, "\n"))
	}
}
