package cursor

import (
	"encoding/base64"
	"strings"

	"github.com/taskgraph/taskgraph/domain"
)

// A list cursor's prefix (doc.go).
const listVersion = "c1:"

// List returns the cursor of the item of a list page whose sort key is sk.
func List(sk string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(listVersion + sk))
}

// OpenList returns the sort key of a list cursor (List) that valid, the
// list's check of its sort keys' shape, accepts. Returns EINVALID for
// anything else.
func OpenList(c string, valid func(string) bool) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	sk, ok := strings.CutPrefix(string(b), listVersion)
	// Only the canonical encoding is a cursor: the decoder would also take
	// line breaks and stray trailing bits.
	if err != nil || !ok || !valid(sk) || List(sk) != c {
		return "", domain.Errorf(domain.EINVALID, "%q is not a cursor of this list", domain.Clip(c))
	}
	return sk, nil
}
