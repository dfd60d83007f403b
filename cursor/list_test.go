package cursor

import (
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
)

func TestListCursorsOpenOnlyAsTheyWereMade(t *testing.T) {
	any := func(string) bool { return true }
	for _, sk := range []string{"DUE#2026-08-25#01J0000000000000000000000A", "COMMENT#01J0000000000000000000000A", ""} {
		c := List(sk)
		if strings.Contains(c, "#") || sk != "" && strings.Contains(c, sk) {
			t.Errorf("List(%q) = %q shows its key", sk, c)
		}
		if got, err := OpenList(c, any); err != nil || got != sk {
			t.Errorf("OpenList(List(%q)) = %q, %v", sk, got, err)
		}
	}
	good := List("COMMENT#X")
	for name, bad := range map[string]string{
		"a character changed":  good[:2] + "x" + good[3:],
		"padded":               good + "==",
		"not base64url":        "***",
		"no prefix":            "Q09NTUVOVCNY",
		"a shape the list has": good,
	} {
		valid := any
		if name == "a shape the list has" {
			valid = func(sk string) bool { return strings.HasPrefix(sk, "DUE#") }
		}
		if sk, err := OpenList(bad, valid); domain.ErrorCode(err) != domain.EINVALID {
			t.Errorf("%s: OpenList(%q) = %q, %v; want EINVALID", name, bad, sk, err)
		}
	}
}
