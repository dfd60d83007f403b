package syncer

import (
	"fmt"
	"slices"
	"testing"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// pid is the id of the i-th project of these tests, in the order of ids.
func pid(i int) string { return fmt.Sprintf("prj#01J%023d", i) }

func viewOf(marks map[string]int64, projects ...string) *dynamo.SyncView {
	u := &domain.User{ID: "ann", Projects: map[string]string{}}
	for _, p := range projects {
		u.Projects[p] = ""
	}
	return &dynamo.SyncView{Profile: u, Marks: marks}
}

func TestAPageReadsTheLeftThenTheChangedThenTheJoined(t *testing.T) {
	tok := &cursor.Sync{States: []cursor.Project{
		{ID: pid(1), Mode: cursor.Read, Pos: 5},  // followed, marked at 5: quiet
		{ID: pid(2), Mode: cursor.Read, Pos: 5},  // followed, marked past it: changed
		{ID: pid(3), Mode: cursor.Read, Pos: 5},  // followed, no mark: changed
		{ID: pid(4), Mode: cursor.Read, Pos: 5},  // no longer listed: left
		{ID: pid(5), Mode: cursor.Leave, Pos: 2}, // being left, listed again: changed
	}}
	view := viewOf(map[string]int64{pid(1): 5, pid(2): 9}, pid(1), pid(2), pid(3), pid(5), pid(6), pid(0))
	plan := planPage(tok, view)
	if want := []string{pid(4), pid(2), pid(3), pid(5), pid(0), pid(6)}; !slices.Equal(plan.read, want) {
		t.Errorf("reads %v, want %v (left, changed, joined, each in the order of ids)", plan.read, want)
	}
	if len(plan.quiet) != 1 || plan.quiet[0].ID != pid(1) || len(plan.kept) != 0 || plan.more {
		t.Errorf("quiet %v, kept %v, more %v; want %s quiet and nothing kept", plan.quiet, plan.kept, plan.more, pid(1))
	}
}

func TestAPageReadsAtMostABatchOfProjects(t *testing.T) {
	var states []cursor.Project
	var listed []string
	for i := range Batch + 3 {
		states = append(states, cursor.Project{ID: pid(i), Mode: cursor.Read})
		listed = append(listed, pid(i))
	}
	listed = append(listed, pid(900)) // joined
	plan := planPage(&cursor.Sync{States: states}, viewOf(nil, listed...))
	if len(plan.read) != Batch || plan.read[0] != pid(0) || !plan.more {
		t.Fatalf("reads %d (first %s), more %v; want the first %d and more", len(plan.read), plan.read[0], plan.more, Batch)
	}
	if len(plan.kept) != 3 || plan.kept[0].ID != pid(Batch) {
		t.Errorf("kept %v; want the 3 followed projects past the batch (the joined one waits unnamed)", plan.kept)
	}
}

func TestShareGivesEachProjectWhatItMayHaveTheRestEvenly(t *testing.T) {
	for _, c := range []struct {
		name    string
		demands []int64
		budget  int
		want    []int
	}{
		{"enough for all", []int64{3, 0, 5}, 100, []int{3, 0, 5}},
		{"split evenly", []int64{50, 50}, 10, []int{5, 5}},
		{"the small one's rest to the large", []int64{2, 50}, 10, []int{2, 8}},
		{"one each while it lasts", []int64{9, 9, 9}, 2, []int{1, 1, 0}},
		{"nothing to give", []int64{4}, 0, []int{0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			works := make([]*work, len(c.demands))
			for i, d := range c.demands {
				works[i] = &work{demand: d}
			}
			share(works, c.budget)
			got, sum := make([]int, len(works)), 0
			for i, w := range works {
				got[i], sum = w.limit, sum+w.limit
			}
			if !slices.Equal(got, c.want) || sum > c.budget {
				t.Errorf("shares %v (sum %d of %d), want %v", got, sum, c.budget, c.want)
			}
		})
	}
}
