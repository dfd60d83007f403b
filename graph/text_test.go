package graph_test

import (
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
)

// Tests of the characters stored text may hold: no control characters
// (single-line fields: none at all; long texts: tab, LF and CR LF only), no
// bidi embedding/override/isolate controls in names, and names stored NFC.

// textBad are strings no single-line field may hold (before the suffix
// " x", so that trimming cannot remove them).
var textBad = []struct{ name, s string }{
	{"NUL", "a\x00b"},
	{"escape", "a\x1b[2Jb"},
	{"bell", "a\x07b"},
	{"DEL", "a\x7fb"},
	{"C1 control", "a\u0085b"},
	{"newline", "a\nb"},
	{"CR LF", "a\r\nb"},
	{"tab", "a\tb"},
	{"line separator", "a\u2028b"},
	{"right-to-left override", "invoice_\u202egpj.exe"},
	{"left-to-right override", "a\u202db"},
	{"right-to-left embedding", "a\u202bb"},
	{"pop directional formatting", "a\u202cb"},
	{"first strong isolate", "a\u2068b"},
	{"pop directional isolate", "a\u2069b"},
}

// textBadLong are strings no long text may hold.
var textBadLong = []struct{ name, s string }{
	{"NUL", "a\x00b"},
	{"escape", "a\x1b[2Jb"},
	{"lone CR", "a\rb"},
	{"vertical tab", "a\x0bb"},
	{"form feed", "a\x0cb"},
	{"DEL", "a\x7fb"},
	{"C1 control", "a\u0085b"},
}

func TestTextFieldsRefuseControlCharacters(t *testing.T) {
	e, s := mutSeeded(t)
	var project *domain.Project
	for _, p := range s.Projects {
		if p.OwnerID == "alice" {
			project = p
		}
	}
	var task *domain.Task
	if project != nil {
		if ts := s.TasksOf(project.ID); len(ts) > 0 {
			task = ts[len(ts)-1]
		}
	}
	if project == nil || task == nil {
		t.Fatal("no project of alice's with a task in the demo data")
	}
	single := []struct {
		field, query string
		vars         func(string) mutVars
	}{
		{"user name", mutUpdateProfile, func(v string) mutVars { return mutVars{"input": mutVars{"name": v}} }},
		{"email", mutUpdateProfile, func(v string) mutVars {
			return mutVars{"input": mutVars{"name": "Alice", "email": "x" + strings.ReplaceAll(v, " ", "") + "@example.com"}}
		}},
		{"new project's name", mutCreateProject, func(v string) mutVars { return mutVars{"input": mutVars{"name": v}} }},
		{"project name", mutUpdateProject, func(v string) mutVars { return mutVars{"input": mutVars{"id": project.ID, "name": v}} }},
		{"new task's title", mutCreateTask, func(v string) mutVars {
			return mutVars{"input": mutVars{"projectId": project.ID, "title": v}}
		}},
		{"task title", mutUpdateTask, func(v string) mutVars { return mutVars{"input": mutVars{"id": task.ID, "title": v}} }},
		{"new task's tag", mutCreateTask, func(v string) mutVars {
			return mutVars{"input": mutVars{"projectId": project.ID, "title": "T", "tags": []string{v}}}
		}},
	}
	long := []struct {
		field, query string
		vars         func(string) mutVars
	}{
		{"new project's description", mutCreateProject, func(v string) mutVars { return mutVars{"input": mutVars{"name": "P", "description": v}} }},
		{"project description", mutUpdateProject, func(v string) mutVars {
			return mutVars{"input": mutVars{"id": project.ID, "description": v}}
		}},
		{"new task's description", mutCreateTask, func(v string) mutVars {
			return mutVars{"input": mutVars{"projectId": project.ID, "title": "T", "description": v}}
		}},
		{"task description", mutUpdateTask, func(v string) mutVars { return mutVars{"input": mutVars{"id": task.ID, "description": v}} }},
		{"comment body", mutAddComment, func(v string) mutVars { return mutVars{"input": mutVars{"taskId": task.ID, "body": v}} }},
	}
	var cases []mutRefusal
	for _, f := range single {
		for _, b := range textBad {
			cases = append(cases, mutRefusal{f.field + " with " + b.name, "alice", mutBadInput, f.query, f.vars(b.s + " x")})
		}
	}
	for _, f := range long {
		for _, b := range textBadLong {
			cases = append(cases, mutRefusal{f.field + " with " + b.name, "alice", mutBadInput, f.query, f.vars(b.s + " x")})
		}
	}
	mutRunRefusals(t, e, cases)

	t.Run("long texts keep tab, newline, CR LF and bidi controls", func(t *testing.T) {
		body := "line 1\r\nline 2\n\tindented \u2067\u05e9\u05dc\u05d5\u05dd\u2069"
		var got struct{ AddComment struct{ Body string } }
		e.MustQuery(t, "alice", mutAddComment, mutVars{"input": mutVars{"taskId": task.ID, "body": body}}, &got)
		if got.AddComment.Body != body {
			t.Errorf("body = %q, want %q", got.AddComment.Body, body)
		}
		var tk struct{ UpdateTask struct{ Description *string } }
		e.MustQuery(t, "alice", mutUpdateTask, mutVars{"input": mutVars{"id": task.ID, "description": body}}, &tk)
		if d := tk.UpdateTask.Description; d == nil || *d != body {
			t.Errorf("description = %v, want %q", d, body)
		}
	})
}

func TestNamesAreStoredNFC(t *testing.T) {
	const nfd, nfc = "Cafe\u0301 Zoe\u0308", "Caf\u00e9 Zo\u00eb"
	e, s := mutSeeded(t)
	var project *domain.Project
	for _, p := range s.Projects {
		if p.OwnerID == "alice" {
			project = p
		}
	}

	t.Run("user name", func(t *testing.T) {
		var got struct{ UpdateProfile mutUserView }
		e.MustQuery(t, "alice", mutUpdateProfile, mutVars{"input": mutVars{"name": nfd}}, &got)
		var me struct{ Me mutUserView }
		e.MustQuery(t, "alice", mutQMe, nil, &me)
		if got.UpdateProfile.Name != nfc || me.Me.Name != nfc {
			t.Errorf("name = %q, then %q; want NFC %q", got.UpdateProfile.Name, me.Me.Name, nfc)
		}
		if it := mutItem(t, e, "USER#alice", "PROFILE"); it == nil || it["name"] != nfc {
			t.Errorf("stored profile = %v, want name %q", it, nfc)
		}
	})
	t.Run("project name", func(t *testing.T) {
		var got struct{ CreateProject mutProjectView }
		e.MustQuery(t, "alice", mutCreateProject, mutVars{"input": mutVars{"name": nfd}}, &got)
		var up struct{ UpdateProject mutProjectView }
		e.MustQuery(t, "alice", mutUpdateProject, mutVars{"input": mutVars{"id": project.ID, "name": " " + nfd + " "}}, &up)
		for _, id := range []string{got.CreateProject.ID, project.ID} {
			p := mutGetProject(t, e, "alice", id)
			if p == nil || p.Name != nfc {
				t.Errorf("project %s name = %v, want NFC %q", id, p, nfc)
			}
		}
		if got.CreateProject.Name != nfc || up.UpdateProject.Name != nfc {
			t.Errorf("returned names %q, %q; want NFC %q", got.CreateProject.Name, up.UpdateProject.Name, nfc)
		}
	})
	t.Run("task title", func(t *testing.T) {
		var got struct{ CreateTask mutTaskView }
		e.MustQuery(t, "alice", mutCreateTask, mutVars{"input": mutVars{"projectId": project.ID, "title": nfd}}, &got)
		if got.CreateTask.Title != nfc {
			t.Errorf("createTask title = %q, want NFC %q", got.CreateTask.Title, nfc)
		}
		var up struct{ UpdateTask mutTaskView }
		e.MustQuery(t, "alice", mutUpdateTask, mutVars{"input": mutVars{"id": got.CreateTask.ID, "title": "x " + nfd}}, &up)
		if tk := mutGetTask(t, e, "alice", got.CreateTask.ID); tk == nil || tk.Title != "x "+nfc || up.UpdateTask.Title != "x "+nfc {
			t.Errorf("task title after update = %v / %q, want NFC %q", tk, up.UpdateTask.Title, "x "+nfc)
		}
	})
}
