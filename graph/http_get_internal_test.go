package graph

import "testing"

func TestOperationKind(t *testing.T) {
	for _, c := range []struct{ query, name, want string }{
		{"{ me { id } }", "", "query"},
		{"query { me { id } }", "", "query"},
		{"mutation { a }", "", "mutation"},
		{"subscription S($p: ID!) { e(p: $p) { k } }", "", "subscription"},
		{"query Q { a } mutation M { b }", "M", "mutation"},
		{"query Q { a } mutation M { b }", "Q", "query"},
		{"query Q { a } mutation M { b }", "", ""}, // not determined: the pipeline says why
		{"query Q { a } mutation M { b }", "X", ""},
		{"query mutation { a }", "mutation", "query"},
		{"fragment F on Mutation { a } mutation @d(x: [1, {y: 2}]) { ...F }", "", "mutation"},
		{`query($s: String = "mutation {") { a(s: $s) }`, "", "query"},
		{"# mutation\n{ a }", "", "query"},
		{"{ me { id ", "", "query"},
		{"}", "", ""},
		{"nonsense", "", ""},
		{"", "", ""},
		{"query \"unterminated", "", ""},
	} {
		if got := operationKind(c.query, c.name); got != c.want {
			t.Errorf("operationKind(%q, %q) = %q, want %q", c.query, c.name, got, c.want)
		}
	}
}
