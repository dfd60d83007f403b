package web

import (
	"bytes"
	"testing"
)

// TestPlainParamsAreWhatDecodingLeavesAsTheyAre: the params that
// liftDocumentID passes on without decoding are exactly those the decoding
// would return unchanged, and any that may hold a documentId key, in any
// case or spelled with escapes, or that are not one JSON object, are
// decoded.
func TestPlainParamsAreWhatDecodingLeavesAsTheyAre(t *testing.T) {
	for _, tc := range []struct {
		params string
		plain  bool
	}{
		{`{"query":"{ me { id } }"}`, true},
		{" \n\t{\"query\":\"{ me { id } }\",\"variables\":{\"a\":[1,2]},\"extensions\":null}", true},
		{`{"query":"query {\n me { id }\n}"}`, true},
		{`{"documentId":"abc"}`, false},
		{`{"DOCUMENTID":"abc","query":null}`, false},
		{`{"query":"{ me { id } }","extensions":{"documentId":"abc"}}`, false},
		{`{"query":"# documentid in the text\n{ me { id } }"}`, false}, // decoded: unchanged all the same
		{`{"\u0064ocumentId":"abc"}`, false},
		{`{"query":"\u007b me { id } }"}`, false},
		{`null`, false},
		{`[{"query":"{ me { id } }"}]`, false},
		{`{"query":"{ me { id } }"} {}`, false},
		{`{"query":`, false},
		{``, false},
	} {
		p := []byte(tc.params)
		if got := plainParams(p); got != tc.plain {
			t.Errorf("plainParams(%s) = %v, want %v", tc.params, got, tc.plain)
		}
		out, err := liftDecoded(p)
		if unchanged := err == nil && bytes.Equal(out, p); tc.plain && !unchanged {
			t.Errorf("%s is plain, but decoding gives %s, %v", tc.params, out, err)
		}
		lifted, err2 := liftDocumentID(p)
		if !bytes.Equal(lifted, out) || (err == nil) != (err2 == nil) {
			t.Errorf("liftDocumentID(%s) = %s, %v; decoding gives %s, %v", tc.params, lifted, err2, out, err)
		}
	}
}
