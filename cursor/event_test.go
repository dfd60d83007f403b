package cursor

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
)

func mustKeys(t *testing.T, key []byte) *Keys {
	t.Helper()
	c, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var testKey = bytes.Repeat([]byte{7}, MinKey)

// oldCursor is a cursor as this server made them before they were
// encrypted: base64url("ev1:" + project + "|" + seq), which anyone could
// write for any sequence.
func oldCursor(project string, seq uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("ev1:" + project + "|" + strconv.FormatUint(seq, 10)))
}

func TestCursorsRoundTripAndAreStable(t *testing.T) {
	c := mustKeys(t, testKey)
	for _, seq := range []uint64{1, 2, 42, 1 << 40, ^uint64(0)} {
		cur := c.Cursor("prj#A", seq)
		if got, err := c.ParseCursor("prj#A", cur); err != nil || got != seq {
			t.Fatalf("round trip of %d: %d, %v", seq, got, err)
		}
		if again := c.Cursor("prj#A", seq); again != cur {
			t.Errorf("seq %d: two cursors %q and %q; want one per event", seq, cur, again)
		}
		if again := mustKeys(t, testKey).Cursor("prj#A", seq); again != cur {
			t.Errorf("seq %d: another instance with the same key made %q, want %q", seq, again, cur)
		}
	}
}

func TestCursorsRevealNoSequence(t *testing.T) {
	c := mustKeys(t, testKey)
	const project = "prj#01J0000000000000000000000A"
	var prev []byte
	for seq := uint64(1); seq <= 300; seq++ {
		cur := c.Cursor(project, seq)
		if len(cur) != 50 {
			t.Fatalf("seq %d: cursor of %d characters; want 50 whatever the sequence", seq, len(cur))
		}
		raw, err := base64.RawURLEncoding.DecodeString(cur)
		if err != nil {
			t.Fatal(err)
		}
		var be [8]byte
		binary.BigEndian.PutUint64(be[:], seq)
		if bytes.Contains(raw, be[:]) || bytes.Contains(raw, []byte(project)) || bytes.Contains(raw, []byte("ULID")) ||
			strings.Contains(string(raw), "|"+strconv.FormatUint(seq, 10)) {
			t.Fatalf("seq %d: the cursor %x shows the sequence or the project", seq, raw)
		}
		if prev != nil {
			// Consecutive events share nothing but the version byte: no
			// counter, no common prefix a client could diff.
			same := 0
			for i := 1; i < len(raw); i++ {
				if raw[i] == prev[i] {
					same++
				}
			}
			if raw[0] != prev[0] || same > 12 {
				t.Fatalf("seq %d and %d: %d of %d bytes alike (%x, %x)", seq-1, seq, same, len(raw)-1, prev, raw)
			}
		}
		prev = raw
	}
	if len(c.Cursor(project, 1)) != len(c.Cursor(project, 1<<62)) {
		t.Error("the length of a cursor tells the size of its sequence")
	}
}

func TestCursorsRefuseWhatTheyDidNotMake(t *testing.T) {
	c := mustKeys(t, testKey)
	other := mustKeys(t, bytes.Repeat([]byte{8}, MinKey))
	good := c.Cursor("prj#A", 42)
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	cases := map[string]string{
		"not base64url":               "***",
		"empty":                       "",
		"old format, seq 1":           oldCursor("prj#A", 1),
		"old format, seq 42":          oldCursor("prj#A", 42),
		"no prefix":                   "cHJqI0F8NDI",        // "prj#A|42"
		"leading zero":                "ZXYxOnByaiNBfDA0Mg", // "ev1:prj#A|042"
		"not a number":                "ZXYxOnByaiNBfHg",    // "ev1:prj#A|x"
		"padded base64":               good + "==",
		"standard base64":             base64.RawStdEncoding.EncodeToString(raw) + "+/",
		"another key's":               other.Cursor("prj#A", 42),
		"another key's, same length":  other.Cursor("prj#A", 1),
		"zeros of the right length":   base64.RawURLEncoding.EncodeToString(make([]byte, eventLen)),
		"truncated":                   good[:len(good)-1],
		"one byte short":              base64.RawURLEncoding.EncodeToString(raw[:len(raw)-1]),
		"one byte more":               base64.RawURLEncoding.EncodeToString(append(append([]byte{}, raw...), 0)),
		"another version":             base64.RawURLEncoding.EncodeToString(append([]byte{2}, raw[1:]...)),
		"sequence zero (our own key)": c.Cursor("prj#A", 0),
	}
	// Every single bit flipped.
	for i := range raw {
		for bit := range 8 {
			b := append([]byte{}, raw...)
			b[i] ^= 1 << bit
			cases["bit "+strconv.Itoa(i*8+bit)+" flipped"] = base64.RawURLEncoding.EncodeToString(b)
		}
	}
	// The last character's unused low bits changed: the same bytes spelled
	// otherwise.
	last := good[len(good)-1]
	for _, alt := range "AQgw" {
		if byte(alt) != last {
			cases["non-canonical spelling "+string(alt)] = good[:len(good)-1] + string(alt)
		}
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			seq, err := c.ParseCursor("prj#A", bad)
			if domain.ErrorCode(err) != domain.EINVALID || err.Error() != errBadCursor.Error() {
				t.Errorf("%q read as %d, %v; want EINVALID %q", bad, seq, err, errBadCursor)
			}
		})
	}
	t.Run("another project's", func(t *testing.T) {
		if seq, err := c.ParseCursor("prj#B", good); domain.ErrorCode(err) != domain.EINVALID || err.Error() != errBadCursor.Error() {
			t.Errorf("read as %d, %v; want EINVALID %q", seq, err, errBadCursor)
		}
	})
}

func TestACursorKeyShorterThan32BytesIsRefused(t *testing.T) {
	if _, err := New(make([]byte, MinKey-1)); err == nil {
		t.Error("a 31-byte key was accepted")
	}
}
