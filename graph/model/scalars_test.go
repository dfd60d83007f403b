package model_test

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// enumFuncs holds the strict unmarshaler and marshaler of every enum of the
// schema; TestEveryEnumIsStrict fails for an enum that has none.
var enumFuncs = map[string]struct {
	unmarshal func(any) (string, error)
	marshal   func(string) string
}{
	"TaskStatus": {
		func(v any) (string, error) { s, err := model.UnmarshalTaskStatus(v); return string(s), err },
		func(s string) string { return marshal(model.MarshalTaskStatus(domain.TaskStatus(s))) },
	},
	"ProjectRole": {
		func(v any) (string, error) { r, err := model.UnmarshalProjectRole(v); return string(r), err },
		func(s string) string { return marshal(model.MarshalProjectRole(domain.Role(s))) },
	},
	"ProjectEventKind": {
		func(v any) (string, error) { k, err := model.UnmarshalProjectEventKind(v); return string(k), err },
		func(s string) string { return marshal(model.MarshalProjectEventKind(domain.EventKind(s))) },
	},
}

func marshal(m interface{ MarshalGQL(w io.Writer) }) string {
	var b strings.Builder
	m.MarshalGQL(&b)
	return b.String()
}

func mustSchema(t *testing.T) *ast.Schema {
	t.Helper()
	src, err := os.ReadFile("../../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	s, gerr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(src)})
	if gerr != nil {
		t.Fatal(gerr)
	}
	return s
}

func TestEveryEnumIsStrict(t *testing.T) {
	enums := 0
	for _, def := range mustSchema(t).Types {
		if def.Kind != ast.Enum || def.BuiltIn || strings.HasPrefix(def.Name, "__") {
			continue
		}
		enums++
		t.Run(def.Name, func(t *testing.T) {
			f, ok := enumFuncs[def.Name]
			if !ok {
				t.Fatalf("enum %s has no strict Marshal/Unmarshal%s in graph/model bound in gqlgen.yml (add them and an entry here)", def.Name, def.Name)
			}
			for _, v := range def.EnumValues {
				got, err := f.unmarshal(v.Name)
				if err != nil || got != v.Name {
					t.Errorf("%s: got %q, %v", v.Name, got, err)
				}
				if m := f.marshal(v.Name); m != `"`+v.Name+`"` {
					t.Errorf("%s is written as %s", v.Name, m)
				}
				for _, bad := range []any{strings.ToLower(v.Name), strings.ToLower(v.Name[:1]) + v.Name[1:], " " + v.Name, v.Name + " "} {
					if got, err := f.unmarshal(bad); err == nil || got != "" {
						t.Errorf("%q was read as %q", bad, got)
					} else if !strings.Contains(err.Error(), def.Name) {
						t.Errorf("the error %q does not name the enum", err)
					}
				}
			}
			for _, bad := range []any{"", "NOPE", 1, true, nil, []any{def.EnumValues[0].Name}} {
				if got, err := f.unmarshal(bad); err == nil || got != "" {
					t.Errorf("%v was read as %q", bad, got)
				}
			}
			if m := f.marshal("not a value"); m != "null" {
				t.Errorf("an unknown value is written as %s", m)
			}
		})
	}
	if enums < len(enumFuncs) {
		t.Fatalf("the schema has %d enums; enumFuncs lists %d", enums, len(enumFuncs))
	}
}

func TestBuiltInScalarsAreStrict(t *testing.T) {
	ints := []struct {
		in   any
		want int
		ok   bool
	}{
		{1, 1, true}, {int64(-5), -5, true}, {json.Number("7"), 7, true}, {json.Number("1.0"), 1, true},
		{json.Number("2147483647"), 2147483647, true}, {json.Number("-2147483648"), -2147483648, true}, {2.0, 2, true},
		{"1", 0, false}, {json.Number("1.5"), 0, false}, {1.5, 0, false}, {json.Number("2147483648"), 0, false},
		{int64(-2147483649), 0, false}, {json.Number("1e20"), 0, false}, {true, 0, false}, {nil, 0, false},
	}
	for _, tc := range ints {
		got, err := model.UnmarshalInt(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Int %#v: got %d, %v", tc.in, got, err)
		}
	}
	for _, in := range []any{1, json.Number("1"), true, nil} {
		if _, err := model.UnmarshalString(in); err == nil {
			t.Errorf("String %#v was accepted", in)
		}
	}
	if s, err := model.UnmarshalString("x"); s != "x" || err != nil {
		t.Errorf("String x: %q %v", s, err)
	}
	for _, in := range []any{"true", "TRUE", 1, json.Number("1"), nil} {
		if _, err := model.UnmarshalBoolean(in); err == nil {
			t.Errorf("Boolean %#v was accepted", in)
		}
	}
	if b, err := model.UnmarshalBoolean(true); !b || err != nil {
		t.Errorf("Boolean true: %v %v", b, err)
	}
}
