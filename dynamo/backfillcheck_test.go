package dynamo

import (
	"strings"
	"testing"
)

// TestBackfillViolationsFindsAnItemWithoutWhatItsBackfillGives checks a
// table's items against its backfills done: a task whose GSI4 key is what
// tasksLeanBackfill makes of its project passes, one with another key or
// none is reported, and nothing is reported before the backfill's marker
// says it is done (an item written before it may lack the key then).
func TestBackfillViolationsFindsAnItemWithoutWhatItsBackfillGives(t *testing.T) {
	const pu, tu = "01HZX3J8Q5W8G2S8V7N1K6T0AB", "01HZX3J8Q5W8G2S8V7N1K6T0CD"
	task := func(gsi4pk any) map[string]any {
		it := map[string]any{"PK": taskPK(tu), "SK": taskSK, "GSI1PK": projectTasksPK(pu), "type": typeTask}
		if gsi4pk != nil {
			it[attrGSI4PK] = gsi4pk
		}
		return it
	}
	marker := map[string]any{"PK": "META", "SK": "BACKFILL#" + tasksLeanBackfill.name, "type": typeBackfillMarker, "done": true}
	for _, c := range []struct {
		name  string
		items []map[string]any
		want  int
	}{
		{"the key the backfill makes", []map[string]any{marker, task(leanTasksPK(pu))}, 0},
		{"another project's key", []map[string]any{marker, task(leanTasksPK("01HZX3J8Q5W8G2S8V7N1K6T0EF"))}, 1},
		{"no key", []map[string]any{marker, task(nil)}, 1},
		{"a key of another type", []map[string]any{marker, task(1.0)}, 1},
		{"no key before the backfill is done", []map[string]any{task(nil)}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := BackfillViolations(c.items)
			if len(got) != c.want {
				t.Fatalf("violations %q, want %d", got, c.want)
			}
			if c.want > 0 && !strings.Contains(got[0], attrGSI4PK) {
				t.Errorf("violation %q does not name %s", got[0], attrGSI4PK)
			}
		})
	}
}
