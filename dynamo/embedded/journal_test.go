package embedded

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	// Nothing the journal writes is shorter than a JSON object: an empty
	// record, or the zeros of a file extended but never written, is none.
	for name, tail := range map[string][]byte{"an empty record": appendRecord(nil, nil), "zeros": make([]byte, 64)} {
		got, good, err := ReadRecords(bytes.NewReader(append(slices.Clone(file), tail...)))
		if !errors.Is(err, ErrTorn) || good != int64(len(file)) || len(got) != len(want) {
			t.Fatalf("%s after the records: %d records, good %d, %v; want them all, then a torn tail", name, len(got), good, err)
		}
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

// A bad record with a whole record after it is damage, not a torn tail:
// the records before it are returned, and the error says where.
func TestADamagedRecordBeforeAWholeOneIsDamage(t *testing.T) {
	file, want := records(3)
	second := len(appendRecord(nil, want[0]))
	third := len(appendRecord(appendRecord(nil, want[0]), want[1]))
	for _, tc := range []struct {
		name   string
		damage func(b []byte)
		good   int
		err    error
	}{
		{"a flipped payload bit in the first record", func(b []byte) { b[recordHeader+3] ^= 1 }, 0, ErrDamaged},
		{"a flipped payload bit in the middle", func(b []byte) { b[second+recordHeader+3] ^= 1 }, second, ErrDamaged},
		{"a flipped checksum bit", func(b []byte) { b[second+5] ^= 0x80 }, second, ErrDamaged},
		{"an impossible length", func(b []byte) { b[second+3] = 0xff }, second, ErrDamaged},
		{"a length past the end of the file", func(b []byte) { b[second+1] = 0x7f }, second, ErrDamaged},
		{"a length too short by one", func(b []byte) { b[second]-- }, second, ErrDamaged},
		{"a flipped bit in the last record", func(b []byte) { b[third+recordHeader+3] ^= 1 }, third, ErrTorn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := slices.Clone(file)
			tc.damage(b)
			got, good, err := ReadRecords(bytes.NewReader(b))
			if !errors.Is(err, tc.err) || good != int64(tc.good) || len(got) != slices.Index([]int{0, second, third}, tc.good) {
				t.Fatalf("%d records, good %d, %v; want good %d, %v", len(got), good, err, tc.good, tc.err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("offset %d", tc.good)) {
				t.Fatalf("the error %q does not name the offset %d", err, tc.good)
			}
		})
	}
}

// Every single flipped bit of a journal is caught: in any record but the
// last it is damage, in the last a torn tail; never a wrong record.
func TestEveryFlippedBitIsCaught(t *testing.T) {
	file, want := records(3)
	third := len(appendRecord(appendRecord(nil, want[0]), want[1]))
	for bit := range len(file) * 8 {
		b := slices.Clone(file)
		b[bit/8] ^= 1 << (bit % 8)
		_, _, err := ReadRecords(bytes.NewReader(b))
		wantErr := ErrDamaged
		if bit/8 >= third {
			wantErr = ErrTorn
		}
		if !errors.Is(err, wantErr) {
			t.Fatalf("bit %d (byte %d of %d) flipped: %v, want %v", bit, bit/8, len(file), err, wantErr)
		}
	}
}

// Replay applies the records of every journal file in order (by number:
// 999999 before 1000000), a torn tail told, kept aside and cut off;
// StartJournal numbers its file after them.
func TestReplayAppliesTheFilesInOrder(t *testing.T) {
	e := mustTableStore(t)
	prefix := filepath.Join(t.TempDir(), "t.journal")
	// File 999999 sets v=1 then deletes; file 1000000 sets v=2, then a
	// torn record that would set v=3.
	mustWriteFile(t, journalPath(prefix, 999999), appendRecord(appendRecord(nil, setV("1")), deleteA()))
	torn := appendRecord(nil, setV("3"))
	last := journalPath(prefix, 1000000)
	mustWriteFile(t, last, append(appendRecord(nil, setV("2")), torn[:len(torn)-4]...))
	var told, kept []string
	n, err := e.Replay(prefix, func(path, k string, err error) { told, kept = append(told, filepath.Base(path)), append(kept, k) })
	if err != nil || n != 3 {
		t.Fatalf("Replay = %d, %v; want 3 records", n, err)
	}
	if !slices.Equal(told, []string{"t.journal.1000000"}) {
		t.Fatalf("torn files told: %v", told)
	}
	if b, err := os.ReadFile(kept[0]); err != nil || !bytes.Equal(b, torn[:len(torn)-4]) {
		t.Fatalf("the torn tail kept aside in %s: %q, %v; want its bytes", kept[0], b, err)
	}
	if b, _ := os.ReadFile(last); !bytes.Equal(b, appendRecord(nil, setV("2"))) {
		t.Fatalf("the last file was not cut to its whole records: %d bytes", len(b))
	}
	if v := mustItemV(t, e); v != "2" {
		t.Fatalf("after the replay v = %q; want 2", v)
	}
	if err := e.StartJournal(prefix, true, nil); err != nil {
		t.Fatal(err)
	}
	if _, seqs, _ := JournalFiles(prefix); !slices.Equal(seqs, []int{999999, 1000000, 1000001}) {
		t.Fatalf("journal files %v after StartJournal; want a new 1000001", seqs)
	}
}

// Damage that is not a torn tail refuses the replay, naming the file and
// the offset: a bad record with a whole one after it, a bad last record in
// a file that is not the newest, a file missing between two others.
func TestReplayRefusesDamage(t *testing.T) {
	good := appendRecord(appendRecord(appendRecord(nil, setV("1")), setV("2")), setV("3"))
	flip := func(off int) []byte { b := slices.Clone(good); b[off] ^= 4; return b }
	second := len(appendRecord(nil, setV("1")))
	for _, tc := range []struct {
		name  string
		files map[int][]byte
		want  []string // in the error
	}{
		{"a bit flipped in the first record", map[int][]byte{1: flip(recordHeader + 5)}, []string{"t.journal.000001", "offset 0"}},
		{"a bit flipped in the middle", map[int][]byte{1: flip(second + recordHeader + 5)}, []string{"t.journal.000001", fmt.Sprintf("offset %d", second)}},
		{"a torn tail in a file before the newest", map[int][]byte{1: good[:len(good)-3], 2: good}, []string{"t.journal.000001", "newer journal files"}},
		{"a file missing", map[int][]byte{1: good, 3: good}, []string{"t.journal.000002 is missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mustTableStore(t)
			prefix := filepath.Join(t.TempDir(), "t.journal")
			for seq, b := range tc.files {
				mustWriteFile(t, journalPath(prefix, seq), b)
			}
			_, err := e.Replay(prefix, func(path, kept string, err error) { t.Errorf("told a torn tail in %s: %v", path, err) })
			if err == nil {
				t.Fatal("Replay of a damaged journal succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error %q does not say %q", err, w)
				}
			}
			for seq, b := range tc.files {
				if got, _ := os.ReadFile(journalPath(prefix, seq)); !bytes.Equal(got, b) {
					t.Errorf("the damaged journal's file %d was changed", seq)
				}
			}
		})
	}
}

// setV is the record of a write that sets item a's v; deleteA of one that
// deletes it.
func setV(v string) []byte {
	return []byte(`{"w":[{"t":"t","k":{"PK":{"S":"a"}},"i":{"PK":{"S":"a"},"v":{"S":"` + v + `"}}}]}`)
}

func deleteA() []byte { return []byte(`{"w":[{"t":"t","k":{"PK":{"S":"a"}}}]}`) }

// mustItemV returns item a's v in table t ("" for no item).
func mustItemV(t *testing.T, e *Store) string {
	t.Helper()
	out, err := e.call("GetItem", map[string]any{"TableName": "t", "Key": map[string]any{"PK": map[string]string{"S": "a"}}, "ConsistentRead": true})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Item struct{ V struct{ S string } }
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return got.Item.V.S
}

func mustWriteFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
