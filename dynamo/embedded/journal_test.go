package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// records returns n framed records of different sizes, and their payloads.
func records(n int) (file []byte, payloads [][]byte) {
	for i := range n {
		p := []byte(fmt.Sprintf(`{"w":[{"t":"t","k":{"PK":{"S":"%d"}},"i":{"v":{"S":"%s"}}}]}`, i, bytes.Repeat([]byte("x"), i*7)))
		payloads = append(payloads, p)
		file = appendRecord(file, p)
	}
	return file, payloads
}

func TestRecordsRoundTrip(t *testing.T) {
	file, want := records(5)
	got, good, err := ReadRecords(bytes.NewReader(file))
	if err != nil || good != int64(len(file)) || !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("ReadRecords = %d records, %d of %d bytes, %v", len(got), good, len(file), err)
	}
	if got, good, err := ReadRecords(bytes.NewReader(nil)); err != nil || good != 0 || len(got) != 0 {
		t.Fatalf("an empty journal: %d records, %d, %v", len(got), good, err)
	}
	empty := appendRecord(nil, nil)
	if got, _, err := ReadRecords(bytes.NewReader(empty)); err != nil || len(got) != 1 || len(got[0]) != 0 {
		t.Fatalf("an empty record: %q, %v", got, err)
	}
}

// A crash may cut the last record anywhere: every cut leaves the records
// before it, and says the last one is torn.
func TestATornLastRecordLeavesTheOnesBefore(t *testing.T) {
	file, want := records(3)
	lastStart := len(appendRecord(appendRecord(nil, want[0]), want[1]))
	for cut := lastStart + 1; cut < len(file); cut++ {
		got, good, err := ReadRecords(bytes.NewReader(file[:cut]))
		if !errors.Is(err, ErrTorn) || good != int64(lastStart) || !slices.EqualFunc(got, want[:2], bytes.Equal) {
			t.Fatalf("cut at %d of %d: %d records, good %d, %v; want 2 records, good %d, ErrTorn", cut, len(file), len(got), good, err, lastStart)
		}
	}
}

func TestADamagedRecordEndsTheJournal(t *testing.T) {
	file, want := records(3)
	second := len(appendRecord(nil, want[0]))
	for name, damage := range map[string]func(b []byte){
		"a flipped payload bit":  func(b []byte) { b[second+recordHeader+3] ^= 1 },
		"a flipped checksum bit": func(b []byte) { b[second+5] ^= 0x80 },
		"an impossible length":   func(b []byte) { b[second+3] = 0xff },
	} {
		t.Run(name, func(t *testing.T) {
			b := slices.Clone(file)
			damage(b)
			got, good, err := ReadRecords(bytes.NewReader(b))
			if !errors.Is(err, ErrTorn) || good != int64(second) || !slices.EqualFunc(got, want[:1], bytes.Equal) {
				t.Fatalf("%d records, good %d, %v; want the first record only, ErrTorn", len(got), good, err)
			}
		})
	}
}

// Replay applies the records of every journal file in order, a torn tail
// told and skipped; StartJournal numbers its file after them.
func TestReplayAppliesTheFilesInOrder(t *testing.T) {
	e, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.call("CreateTable", map[string]any{"TableName": "t",
		"AttributeDefinitions": []map[string]string{{"AttributeName": "PK", "AttributeType": "S"}},
		"KeySchema":            []map[string]string{{"AttributeName": "PK", "KeyType": "HASH"}},
		"BillingMode":          "PAY_PER_REQUEST"}); err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(t.TempDir(), "t.journal")
	rec := func(v string, del bool) []byte {
		if del {
			return []byte(`{"w":[{"t":"t","k":{"PK":{"S":"a"}}}]}`)
		}
		return []byte(`{"w":[{"t":"t","k":{"PK":{"S":"a"}},"i":{"PK":{"S":"a"},"v":{"S":"` + v + `"}}}]}`)
	}
	// File 2 sets v=1 then deletes; file 10 (numbers sort as numbers) sets
	// v=2, then a torn record that would set v=3.
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(journalPath(prefix, 2), appendRecord(appendRecord(nil, rec("1", false)), rec("", true)), 0o600))
	torn := appendRecord(nil, rec("3", false))
	must(os.WriteFile(journalPath(prefix, 10), append(appendRecord(nil, rec("2", false)), torn[:len(torn)-4]...), 0o600))
	var told []string
	n, err := e.Replay(prefix, func(path string, err error) { told = append(told, filepath.Base(path)) })
	if err != nil || n != 3 {
		t.Fatalf("Replay = %d, %v; want 3 records", n, err)
	}
	if !slices.Equal(told, []string{"t.journal.000010"}) {
		t.Fatalf("torn files told: %v", told)
	}
	out, err := e.call("GetItem", map[string]any{"TableName": "t", "Key": map[string]any{"PK": map[string]string{"S": "a"}}})
	if err != nil || !bytes.Contains(out, []byte(`"v":{"S":"2"}`)) {
		t.Fatalf("after the replay the item is %s, %v; want v=2", out, err)
	}
	must(e.StartJournal(prefix, true))
	if _, seqs, _ := JournalFiles(prefix); !slices.Equal(seqs, []int{2, 10, 11}) {
		t.Fatalf("journal files %v after StartJournal; want a new 11", seqs)
	}
}
