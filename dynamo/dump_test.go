package dynamo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/dynamo/embedded"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestDumpCodecRoundTripsEveryType(t *testing.T) {
	it := Item{
		"PK":   &types.AttributeValueMemberS{Value: "USER#a\"b\n"},
		"SK":   &types.AttributeValueMemberS{Value: "PROFILE"},
		"n":    &types.AttributeValueMemberN{Value: "-12.5e3"},
		"b":    &types.AttributeValueMemberB{Value: []byte{0, 1, 255}},
		"t":    &types.AttributeValueMemberBOOL{Value: true},
		"f":    &types.AttributeValueMemberBOOL{Value: false},
		"null": &types.AttributeValueMemberNULL{Value: true},
		"ss":   &types.AttributeValueMemberSS{Value: []string{"x", "y"}},
		"ns":   &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
		"bs":   &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "in a list"}, &types.AttributeValueMemberL{Value: []types.AttributeValue{}}}},
		"m": &types.AttributeValueMemberM{Value: Item{"k": &types.AttributeValueMemberN{Value: "1"},
			"deep": &types.AttributeValueMemberM{Value: Item{}}}},
	}
	line, err := json.Marshal(map[string]any{"Item": encodeItem(it)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadDump(strings.NewReader(string(line) + "\n{\"Count\":1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], it) {
		t.Fatalf("round trip changed the item:\n got %#v\nwant %#v", got, it)
	}
}

func TestReadDumpRefusesDamage(t *testing.T) {
	item := `{"Item":{"PK":{"S":"a"},"SK":{"S":"b"}}}`
	for _, tc := range []struct{ name, dump, want string }{
		{"no count line: cut short", item + "\n", "cut short"},
		{"empty", "", "cut short"},
		{"a wrong count", item + "\n" + `{"Count":2}` + "\n", "line 2: says 2 items, found 1"},
		{"lines after the count", item + "\n" + `{"Count":1}` + "\n" + item + "\n", "line 3: data after"},
		{"a line cut in half", item[:20] + "\n" + `{"Count":1}` + "\n", "line 1: not a JSON object"},
		{"neither item nor count", `{"Other":1}` + "\n", "line 1: neither"},
		{"an untyped value", `{"Item":{"PK":"a","SK":{"S":"b"}}}` + "\n{\"Count\":1}\n", `line 1: attribute "PK"`},
		{"an unknown type", `{"Item":{"PK":{"S":"a"},"SK":{"Z":"b"}}}` + "\n{\"Count\":1}\n", "unknown type"},
		{"a number as a string's value", `{"Item":{"PK":{"S":1},"SK":{"S":"b"}}}` + "\n{\"Count\":1}\n", "bad S value"},
		{"no key", `{"Item":{"x":{"S":"a"}}}` + "\n{\"Count\":1}\n", "has no PK and SK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, err := ReadDump(strings.NewReader(tc.dump))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadDump = %d items, %v; want an error saying %q", len(items), err, tc.want)
			}
		})
	}
}

// A dump carries the checksum of its items in its last line, and every
// single flipped bit of it is refused (a dump of version 1, without one,
// still loads: TestDumpCodecRoundTripsEveryType).
func TestADumpsChecksumCatchesEveryFlippedBit(t *testing.T) {
	s, _ := persistStore(t)
	ctx := context.Background()
	for i, name := range []string{"Ann", "Bo", "Cy"} {
		it := Item{"PK": &types.AttributeValueMemberS{Value: "USER#" + name}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"},
			"n": &types.AttributeValueMemberN{Value: strconv.Itoa(i)}}
		if err := s.PutItems(ctx, []Item{it}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := s.Export(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	dump := buf.Bytes()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	n := len(lines) - 1 // the three items, and the marker of complete tag indexes
	if last := lines[n]; !regexp.MustCompile(`^\{"Count":` + strconv.Itoa(n) + `,"Version":2,"Checksum":"[0-9a-f]{8}"\}$`).MatchString(last) {
		t.Fatalf("the last line is %s; want the count, version 2 and a checksum", last)
	}
	if items, err := ReadDump(bytes.NewReader(dump)); err != nil || len(items) != n || n < 3 {
		t.Fatalf("ReadDump of the export = %d items, %v", len(items), err)
	}
	// In reverse order the items have the same checksum.
	reversed := slices.Clone(lines[:n])
	slices.Reverse(reversed)
	if _, err := ReadDump(strings.NewReader(strings.Join(append(reversed, lines[n]), "\n") + "\n")); err != nil {
		t.Fatalf("the items in another order: %v", err)
	}
	for bit := range len(dump) * 8 {
		b := slices.Clone(dump)
		b[bit/8] ^= 1 << (bit % 8)
		if items, err := ReadDump(bytes.NewReader(b)); err == nil {
			t.Fatalf("bit %d flipped (byte %d, %q in %q): loaded %d items", bit, bit/8, dump[bit/8], b, len(items))
		}
	}
	for _, tc := range []struct{ name, last, want string }{
		{"a checksum that does not match", regexp.MustCompile(`"[0-9a-f]{8}"`).ReplaceAllLiteralString(lines[n], `"0000000g"`), "do not match the checksum"},
		{"a version 2 without a checksum", `{"Count":N,"Version":2}`, "checksum is missing"},
		{"a checksum without a version", `{"Count":N,"Checksum":"00000000"}`, "without a version"},
		{"an unknown version", `{"Count":N,"Version":4,"Checksum":"00000000"}`, "version 4"},
		{"an unknown field", `{"Count":N,"Versiom":2,"Checksum":"00000000"}`, `unknown field "Versiom"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := strings.Replace(tc.last, "N", strconv.Itoa(n), 1)
			_, err := ReadDump(strings.NewReader(strings.Join(append(slices.Clone(lines[:n]), last), "\n") + "\n"))
			if want := fmt.Sprintf("line %d", n+1); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadDump = %v; want an error on %s saying %q", err, want, tc.want)
			}
		})
	}
}

// persistStore is a store on its own embedded server (DataFile counts the
// server's writes, so it may not share one).
func persistStore(t *testing.T) (*Store, *embedded.Store) {
	t.Helper()
	emb, err := embedded.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	s := New(emb.Client(), "task-manager")
	s.Log = slog.New(slog.DiscardHandler)
	if _, err := s.EnsureTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, emb
}

func exportString(t *testing.T, s *Store) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := s.Export(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return strings.Join(sortedLinesOf(b.String()), "\n")
}

func sortedLinesOf(s string) []string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(l)
	return l
}

func TestDataFileSavesOnlyChangesAndLoadsThemBack(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "table.jsonl")
	s, emb := persistStore(t)
	var grown []int
	f := &DataFile{Path: path, Store: s, Embedded: emb, Comfortable: 110, Grown: func(n int) { grown = append(grown, n) }}
	if n, found, err := f.Load(ctx); err != nil || found || n != 0 {
		t.Fatalf("Load of a missing file = %d, %v, %v", n, found, err)
	}
	if saved, err := f.Save(ctx); err != nil || saved {
		t.Fatalf("Save with no write = %v, %v; want no save", saved, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a file was written with no change: %v", err)
	}

	s.Now = func() time.Time { return storeTestNow }
	if err := s.Import(ctx, s.Demo(storeTestNow)); err != nil {
		t.Fatal(err)
	}
	if saved, err := f.Save(ctx); err != nil || !saved {
		t.Fatalf("Save after writes = %v, %v", saved, err)
	}
	if len(grown) != 0 {
		t.Fatalf("Grown called at %v items, below the comfortable 110", grown)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Fatalf("data file mode %v, want 0600", info.Mode().Perm())
	}
	if saved, _ := f.Save(ctx); saved {
		t.Fatal("saved again with no write in between")
	}
	want := exportString(t, s)

	// A save cut short by a crash leaves a temporary file; the next load
	// removes it and reads the last whole snapshot.
	leftover := path + ".123.tmp"
	if err := os.WriteFile(leftover, []byte("half a snap"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, emb2 := persistStore(t)
	f2 := &DataFile{Path: path, Store: s2, Embedded: emb2, Comfortable: 110, Grown: func(n int) { grown = append(grown, n) }}
	n, found, err := f2.Load(ctx)
	if err != nil || !found || n != len(sortedLinesOf(want))-1 {
		t.Fatalf("Load = %d, %v, %v; want %d items", n, found, err, len(sortedLinesOf(want))-1)
	}
	if got := exportString(t, s2); got != want {
		t.Fatal("the reloaded table differs from the saved one")
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Fatal("the leftover temporary file is still there")
	}
	if saved, _ := f2.Save(ctx); saved {
		t.Fatal("loading counted as a change")
	}

	// Past the comfortable size Grown is told once.
	b := s2.NewDataset(storeTestNow)
	for i := range 30 {
		b.User("extra"+string(rune('a'+i%26))+string(rune('a'+i/26)), "Extra", "")
	}
	for round := range 2 {
		if err := s2.Import(ctx, &b.D); err != nil {
			t.Fatal(err)
		}
		if _, err := f2.Save(ctx); err != nil {
			t.Fatal(err)
		}
		if len(grown) != 1 || grown[0] != n+30 {
			t.Fatalf("after save %d Grown calls %v; want one with %d items", round+1, grown, n+30)
		}
	}
}
