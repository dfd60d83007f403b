package etag

import (
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
)

func testStands() *stands {
	email := "a@example.com"
	return &stands{build: "b", viewer: "ana", identity: "application/json\nquery=%7B+me+%7B+id+%7D+%7D", today: "2026-08-25",
		profile: &domain.User{ID: "ana", Name: "Ana", Email: &email, CreatedAt: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), Rev: 2,
			Projects: map[string]string{"prj#01M0WCN9G0DMBAT2XV8S67EC21": "Mobile", "prj#01M0WCN9G0DMBAT2XV8NYGPVHM": "Web"}},
		projects: []string{"prj#01M0WCN9G0DMBAT2XV8NYGPVHM", "prj#01M0WCN9G0DMBAT2XV8S67EC21"}, seqs: []int64{4, 9},
		filter: filterOf([]string{"ben", "cy"})}
}

// TestATagNamesWhatItsCheckReads: a tag parses back to its hash, filter
// and projects; what is not a tag of ours (another shape, projects out of
// order, too many) does not parse.
func TestATagNamesWhatItsCheckReads(t *testing.T) {
	s := testStands()
	p, ok := parse(s.tag())
	if !ok || p.sum != s.sum() || string(p.filter) != string(s.filter) || len(p.projects) != 2 || p.projects[0] != s.projects[0] {
		t.Fatalf("parse(%q) = %+v, %v", s.tag(), p, ok)
	}
	none := &stands{build: "b", viewer: "ana", profile: s.profile, projects: []string{}}
	if p, ok := parse(none.tag()); !ok || p.filter != nil || len(p.projects) != 0 {
		t.Errorf("a tag on the profile alone, %q: %+v, %v", none.tag(), p, ok)
	}
	u := s.projects[1][len("prj#"):] + s.projects[0][len("prj#"):]
	many := ""
	for range MaxProjects + 1 {
		many += u[:domain.ULIDLen]
	}
	for _, bad := range []string{"", "x", s.sum() + ".." + u, s.sum() + "." + "!!" + ".", s.sum() + ".." + many, s.sum() + ".." + "0123"} {
		if _, ok := parse(bad); ok {
			t.Errorf("parse(%q) took it", bad)
		}
	}
}

// TestTheHashHoldsEverythingATagStandsOn: a change of any input changes
// the hash.
func TestTheHashHoldsEverythingATagStandsOn(t *testing.T) {
	base := testStands().sum()
	changes := map[string]func(s *stands){
		"the build": func(s *stands) { s.build = "c" }, "the viewer": func(s *stands) { s.viewer = "ben" },
		"the request": func(s *stands) { s.identity += "x" }, "the date": func(s *stands) { s.today = "2026-08-26" },
		"the name": func(s *stands) { s.profile.Name = "Ann" }, "the email": func(s *stands) { s.profile.Email = nil },
		"a copy's name":  func(s *stands) { s.profile.Projects["prj#01M0WCN9G0DMBAT2XV8NYGPVHM"] = "Web 2" },
		"a copy dropped": func(s *stands) { delete(s.profile.Projects, "prj#01M0WCN9G0DMBAT2XV8NYGPVHM") },
		"a seq":          func(s *stands) { s.seqs[1]++ }, "the users": func(s *stands) { s.filter = filterOf([]string{"ben"}) },
	}
	for what, change := range changes {
		s := testStands()
		change(s)
		if s.sum() == base {
			t.Errorf("changing %s leaves the hash", what)
		}
	}
}

// TestTheFilterHoldsItsUsers: every user put in is held; a user left out
// mostly is not (a false positive costs a 200, never a stale 304).
func TestTheFilterHoldsItsUsers(t *testing.T) {
	var in []string
	for i := range 30 {
		in = append(in, string(rune('a'+i%26))+string(rune('0'+i/26)))
	}
	f := filterOf(in)
	for _, u := range in {
		if !mayHold(f, u) {
			t.Fatalf("the filter does not hold %s", u)
		}
	}
	held := 0
	for i := range 1000 {
		if mayHold(f, "other"+string(rune(i))) {
			held++
		}
	}
	if held > 100 || mayHold(nil, "a0") {
		t.Errorf("%d of 1000 users left out are held", held)
	}
}

// TestIfNoneMatchNamesOneTag: the first tag of If-None-Match, weak or
// strong; "*" and malformed values name none.
func TestIfNoneMatchNamesOneTag(t *testing.T) {
	for in, want := range map[string]string{`"a.b.c"`: "a.b.c", `W/"a.b.c"`: "a.b.c", ` "x" , "y"`: "x", `*`: "", `a.b.c`: "", ``: ""} {
		if got := NewRequest("", "", in).candidate(); got != want {
			t.Errorf("If-None-Match %q names %q, want %q", in, got, want)
		}
	}
}
