package dynamo

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
)

// exportItems exports a store's table and reads it back.
func exportItems(t *testing.T, s *testStore) []item {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.Export(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	items, err := ReadDump(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// An export and import keeps the change log as it is (its positions and
// epoch: the clients' tokens stay valid); a dump without it, as a version
// before the log wrote it, is imported with the log built (every object an
// entry of its own) and a new epoch; one whose objects are out of step with
// their log (an older version's journal replayed over it) is rebuilt too.
func TestTheChangeLogThroughExportAndImport(t *testing.T) {
	ctx := context.Background()
	src := newTestStore(t)
	src.mustImport(t, src.Demo(storeTestNow))
	// A change after the import, so that positions are not just the build's.
	var task, project, member string
	all := exportItems(t, src)
	for _, it := range all {
		if str(it, "type") == typeTask && task == "" {
			task, project = str(it, "id"), str(it, "projectId")
		}
	}
	for _, it := range all {
		if str(it, "type") == typeMember && str(it, "projectId") == project {
			member = str(it, "userId")
		}
	}
	title := "moved on"
	if _, err := src.UpdateTask(ctx, member, TaskPatch{ID: task, Title: domain.Opt[*string]{Set: true, Value: &title}}); err != nil {
		t.Fatal(err)
	}
	epoch, _ := src.ChangeEpoch()
	items := exportItems(t, src)
	log := func(items []item) []string {
		var out []string
		for _, it := range items {
			switch str(it, "type") {
			case typeChange, typeLeft, typeChangeMarker, typeTask, typeMember, typeComment, typeProject:
				out = append(out, str(it, attrPK)+" "+str(it, attrSK)+" "+str(it, "id")+" "+str(it, "epoch")+" "+
					strings.Join([]string{itoa(numberOf(it, attrSyncSeq)), itoa(numberOf(it, attrBorn)), itoa(numberOf(it, attrSeq))}, "/"))
			}
		}
		slices.Sort(out)
		return out
	}

	t.Run("a dump with its log loads as it is", func(t *testing.T) {
		dst := newTestStore(t)
		if err := dst.PutItems(ctx, items); err != nil {
			t.Fatal(err)
		}
		if got, _ := dst.ChangeEpoch(); got != epoch {
			t.Errorf("epoch %q after the import, want %q", got, epoch)
		}
		if got, want := log(exportItems(t, dst)), log(items); !slices.Equal(got, want) {
			t.Errorf("the log changed through export and import:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("a dump without the log loads with it built, and a new epoch", func(t *testing.T) {
		var old []item
		for _, it := range items {
			switch str(it, "type") {
			case typeChange, typeLeft, typeChangeMarker:
				continue
			}
			c := make(item, len(it))
			for k, v := range it {
				if k != attrSyncSeq && k != attrBorn && k != attrSeq && k != attrProjectSeq {
					c[k] = v
				}
			}
			old = append(old, c)
		}
		dst := newTestStore(t)
		if err := dst.PutItems(ctx, old); err != nil {
			t.Fatal(err)
		}
		got, ok := dst.ChangeEpoch()
		if !ok || got == epoch || got == newTableEpoch {
			t.Errorf("epoch %q (%v) after building the log; want a new one", got, ok)
		}
		after := exportItems(t, dst)
		if _, _, ok := changeLogInStep(after); !ok {
			t.Error("the built log is not in step with its objects")
		}
		entries := 0
		for _, it := range after {
			if str(it, "type") == typeChange {
				entries++
			}
		}
		objects := 0
		for _, it := range old {
			if tp := str(it, "type"); tp == typeTask || tp == typeMember || tp == typeComment {
				objects++
			}
		}
		if entries != objects {
			t.Errorf("%d entries for %d objects", entries, objects)
		}
	})
	t.Run("a dump whose objects are out of step with their log is rebuilt", func(t *testing.T) {
		var stale []item
		for _, it := range items {
			c := make(item, len(it))
			for k, v := range it {
				c[k] = v
			}
			if str(c, "id") == task {
				delete(c, attrSyncSeq) // as a version without the log rewrote it
			}
			stale = append(stale, c)
		}
		dst := newTestStore(t)
		if err := dst.PutItems(ctx, stale); err != nil {
			t.Fatal(err)
		}
		if got, _ := dst.ChangeEpoch(); got == epoch {
			t.Error("the epoch stayed: tokens of the old log would be taken")
		}
		if _, _, ok := changeLogInStep(exportItems(t, dst)); !ok {
			t.Error("the rebuilt log is not in step with its objects")
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
