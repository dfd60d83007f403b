package dynamo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A snapshot taken while writers go on is the table at one point in time:
// each writer's transactions add an item and set its counter to the
// number of items it has, so a table read across writes (a scan page by
// page) would show a counter without its items or items past it. Every
// snapshot taken under load holds each writer's items 1..counter exactly;
// the last one alone is such a state too, no further on than what was
// answered; and a restart from it and the journal is exactly the writes
// answered OK.
func TestASnapshotTakenWhileWritesGoOnIsOnePointInTime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "task-manager.jsonl")
	f, _, emb, _ := journaledFile(t, path)
	if _, _, err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	const writers, snapshots, fillers = 4, 6, 5000
	// Between each writer's counter and its items in key order, fillers:
	// reading the table takes a while between the two.
	var fill [][]byte
	for w := range writers {
		for k := range fillers {
			fill = append(fill, fmt.Appendf(nil, `{"PK":{"S":"SNAP#%d"},"SK":{"S":"$filler%05d"}}`, w, k))
		}
	}
	if err := emb.LoadItems("task-manager", fill); err != nil {
		t.Fatal(err)
	}
	db := emb.Client()
	var ok [writers]int
	var total atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			pk := &types.AttributeValueMemberS{Value: fmt.Sprintf("SNAP#%d", w)}
			for n := 1; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Put: &types.Put{TableName: aws.String("task-manager"), Item: map[string]types.AttributeValue{
						"PK": pk, "SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("%05d", n)}}}},
					{Put: &types.Put{TableName: aws.String("task-manager"), Item: map[string]types.AttributeValue{
						"PK": pk, "SK": &types.AttributeValueMemberS{Value: "#last"}, "n": &types.AttributeValueMemberN{Value: strconv.Itoa(n)}}}},
				}})
				if err != nil {
					t.Errorf("writer %d, write %d: %v", w, n, err)
					return
				}
				ok[w] = n
				total.Add(1)
			}
		})
	}
	check := func(what string, its []Item) [writers]int {
		t.Helper()
		var counters [writers]int
		seen := map[string]int{}
		for _, it := range its {
			pk := str(it, "PK")
			var w int
			if _, err := fmt.Sscanf(pk, "SNAP#%d", &w); err != nil {
				continue
			}
			if sk := str(it, "SK"); sk[0] == '$' {
				continue
			} else if sk == "#last" {
				counters[w], _ = strconv.Atoi(it["n"].(*types.AttributeValueMemberN).Value)
			} else {
				seen[pk+"/"+sk]++
			}
		}
		n := 0
		for w, c := range counters {
			for k := 1; k <= c; k++ {
				if seen[fmt.Sprintf("SNAP#%d/%05d", w, k)] != 1 {
					t.Fatalf("%s: writer %d's counter is %d, its item %d is missing", what, w, c, k)
				}
				n++
			}
		}
		if n != len(seen) {
			t.Fatalf("%s: %d items past the counters %v", what, len(seen)-n, counters)
		}
		return counters
	}
	read := func(p string) []Item {
		t.Helper()
		r, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		its, err := ReadDump(r)
		if err != nil {
			t.Fatal(err)
		}
		return its
	}
	var last [writers]int
	for i := range snapshots {
		for total.Load() < int64(20*(i+1)) && !t.Failed() { // writes between snapshots
			time.Sleep(time.Millisecond)
		}
		if saved, err := f.Save(ctx); err != nil || !saved {
			t.Fatalf("snapshot %d: %v, %v", i, saved, err)
		}
		last = check(fmt.Sprintf("snapshot %d", i), read(path))
	}
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}
	answered := ok
	for w := range writers {
		if last[w] > answered[w] {
			t.Fatalf("the last snapshot has writer %d at %d, past the %d answered", w, last[w], answered[w])
		}
	}

	// The last snapshot alone.
	alone := filepath.Join(t.TempDir(), "task-manager.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o600); err != nil {
		t.Fatal(err)
	}
	fa, sa, _, _ := journaledFile(t, alone)
	if _, _, err := fa.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if got := check("the last snapshot loaded", tableItems(t, sa)); got != last {
		t.Fatalf("the last snapshot loads as %v, was %v", got, last)
	}

	// A restart (no save at the end: a crash) from the snapshot and the
	// journal: exactly the writes answered.
	f2, s2, _, _ := journaledFile(t, path)
	if _, _, err := f2.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if got := check("the restart", tableItems(t, s2)); got != answered {
		t.Fatalf("the restart holds %v, the writes answered were %v", got, answered)
	}
	if f2.Replayed == 0 {
		t.Fatal("the restart replayed no journal record: the writes after the last snapshot were not in the journal")
	}
}

// tableItems is the table's items, exported.
func tableItems(t *testing.T, s *Store) []Item {
	t.Helper()
	var b bytes.Buffer
	if _, err := s.Export(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	its, err := ReadDump(&b)
	if err != nil {
		t.Fatal(err)
	}
	return its
}

// A snapshot (version 3) is read back whole by Load's own reader, and any
// flipped bit in it makes that reader pass it to ReadDump, which refuses
// it: a damaged snapshot never loads, by either path.
func TestASnapshotsChecksumCatchesEveryFlippedBit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "task-manager.jsonl")
	f, s, _, _ := journaledFile(t, path)
	if _, _, err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"Ann", "Bo", "Cy"} {
		it := Item{"PK": &types.AttributeValueMemberS{Value: "USER#" + name}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"},
			"n": &types.AttributeValueMemberN{Value: strconv.Itoa(i)}, "s": &types.AttributeValueMemberS{Value: "<&>\u00e9\n"}}
		if err := s.PutItems(ctx, []Item{it}); err != nil {
			t.Fatal(err)
		}
	}
	if saved, err := f.Save(ctx); err != nil || !saved {
		t.Fatalf("Save = %v, %v", saved, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	items, whole := snapshotLines(b)
	if !whole || len(items) < 3 || !bytes.Contains(b, []byte(`"Version":3,`)) {
		t.Fatalf("the snapshot is not read whole (%v, %d items)", whole, len(items))
	}
	if its, err := ReadDump(bytes.NewReader(b)); err != nil || len(its) != len(items) {
		t.Fatalf("ReadDump of a snapshot (an import) = %d items, %v; want %d", len(its), err, len(items))
	}
	for bit := range len(b) * 8 {
		c := slices.Clone(b)
		c[bit/8] ^= 1 << (bit % 8)
		if _, whole := snapshotLines(c); whole {
			t.Fatalf("bit %d flipped (byte %d, %q): read whole", bit, bit/8, b[bit/8])
		}
		if _, err := ReadDump(bytes.NewReader(c)); err == nil {
			t.Fatalf("bit %d flipped (byte %d, %q): ReadDump loaded it", bit, bit/8, b[bit/8])
		}
	}
}
