package cursor

import (
	"bytes"
	"encoding/base64"
	"reflect"
	"strconv"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
)

// aToken is a sync token's content with a project in each mode.
func aToken() *Sync {
	return &Sync{Final: true, StreamSeq: 99, Epoch: "ep1", Issued: 1767225600, ProfileRev: 3, States: []Project{
		{ID: "prj#01J0000000000000000000000A", Mode: Read, Pos: 12, Skip: 3, Seen: 9},
		{ID: "prj#01J0000000000000000000000B", Mode: Leave, Pos: 7, Skip: 7, Seen: 5},
	}}
}

func TestSyncTokensRoundTrip(t *testing.T) {
	k := mustKeys(t, testKey)
	for _, tok := range []*Sync{aToken(), {Epoch: "e", States: []Project{}}, {Issued: -5, StreamSeq: 1 << 60}} {
		got, err := mustKeys(t, testKey).OpenSync("u1", k.SealSync("u1", tok))
		if err != nil {
			t.Fatal(err)
		}
		if len(tok.States) == 0 {
			tok.States = []Project{}
		}
		if !reflect.DeepEqual(got, tok) {
			t.Errorf("opened %+v, sealed %+v", got, tok)
		}
	}
}

// TestSyncTokensOfTheFormerPackageStillOpen opens a token sealed, and
// checks a cursor and a derived key made, by the code before it moved
// here (live/cursor.go, graph/synctoken.go): the tokens and cursors
// clients hold stay good across the move.
func TestSyncTokensOfTheFormerPackageStillOpen(t *testing.T) {
	k := mustKeys(t, testKey)
	const before = "Ap2u921Uk7FVzqPByKzxo2zGCAKeXOuZRokT0Oj5tjqsMRO89MArgF8-D6P3OVhsjijZZFCBqt2uWEaDeuJhizuob8kYrveBSH5FfaYKLuoO32_cHoMA3mo6"
	got, err := k.OpenSync("u1", before)
	if err != nil || !reflect.DeepEqual(got, aToken()) {
		t.Errorf("opened %+v, %v; want %+v", got, err, aToken())
	}
	if c := k.Cursor("prj#01J0000000000000000000000A", 42); c != "ASgpbEoBijC016ECEvlrtdauvQM_ZFOEPBrY6VckDrT4nKtZxQ" {
		t.Errorf("the event cursor is %q, not the one the former code made", c)
	}
	if d := DeriveKey([]byte("s3cret")); !bytes.Equal(d, mustHex(t, "fce9a544deadc80f85334e7d106a3a84ab05e83372a23b9e1c3bc52d9f2a0f25")) {
		t.Errorf("DeriveKey gives %x, not the former key", d)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := ParseKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSyncTokensRefuseWhatTheyDidNotSeal(t *testing.T) {
	k := mustKeys(t, testKey)
	good := k.SealSync("u1", aToken())
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	// seal seals plain as k would, so that only the body is wrong.
	seal := func(plain []byte) string {
		out := append([]byte{syncVersion}, make([]byte, nonceLen)...)
		return base64.RawURLEncoding.EncodeToString(k.sync.Seal(out, out[1:], plain, syncAAD("u1")))
	}
	head := func(flags byte) []byte { return append([]byte{flags}, make([]byte, 8)...) }
	body := aToken().body()
	cases := map[string]string{
		"empty":                "",
		"garbage":              "not a token",
		"an event cursor":      k.Cursor("prj#A", 1),
		"another viewer's":     k.SealSync("u2", aToken()),
		"another key's":        mustKeys(t, bytes.Repeat([]byte{8}, MinKey)).SealSync("u1", aToken()),
		"truncated":            good[:len(good)-2],
		"padded":               good + "==",
		"unknown flags":        seal(append(head(0x02), body...)),
		"no body":              seal(head(0)),
		"another body version": seal(append(head(0), append([]byte{2}, body[1:]...)...)),
		"a byte more":          seal(append(head(0), append(body, 0)...)),
		"a byte less":          seal(append(head(0), body[:len(body)-1]...)),
	}
	for i := range raw {
		b := append([]byte{}, raw...)
		b[i] ^= 0x10
		cases["byte "+strconv.Itoa(i)+" changed"] = base64.RawURLEncoding.EncodeToString(b)
	}
	modes := append([]byte{}, body...)
	modes[len(modes)-4] = 7 // the last project's mode
	cases["mode 7"] = seal(append(head(0), modes...))
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := k.OpenSync("u1", bad)
			if domain.ErrorCode(err) != domain.EINVALID || err.Error() != errBadSyncToken.Error() {
				t.Errorf("opened %+v, %v; want EINVALID %q", got, err, errBadSyncToken)
			}
		})
	}
}
