package graph

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// TestStrictInputsCoverEveryEnum walks the schema's enums: for each, the
// input check refuses a name of another case, alone, in a list and in a
// list of lists, and takes every exact name, so an enum added later is
// strict without more code.
func TestStrictInputsCoverEveryEnum(t *testing.T) {
	s := strictInputs{schema: NewExecutableSchema(Config{Resolvers: &Resolver{}}).Schema()}
	enums := 0
	for _, def := range s.schema.Types {
		if def.Kind != ast.Enum || strings.HasPrefix(def.Name, "__") {
			continue
		}
		enums++
		t.Run(def.Name, func(t *testing.T) {
			types := []*ast.Type{ast.NamedType(def.Name, nil), ast.NonNullNamedType(def.Name, nil),
				ast.ListType(ast.NonNullNamedType(def.Name, nil), nil), ast.ListType(ast.ListType(ast.NamedType(def.Name, nil), nil), nil)}
			for _, v := range def.EnumValues {
				for _, typ := range types {
					for _, bad := range []string{strings.ToLower(v.Name), strings.ToLower(v.Name[:1]) + v.Name[1:], v.Name + " "} {
						in := wrap(typ, bad)
						if msg := s.check(typ, in); !strings.Contains(msg, def.Name) {
							t.Errorf("%s %#v: %q", typ, in, msg)
						}
					}
					if msg := s.check(typ, wrap(typ, v.Name)); msg != "" {
						t.Errorf("%s %s: %q", typ, v.Name, msg)
					}
				}
			}
			if msg := s.check(types[0], 1); msg == "" {
				t.Error("a number was taken for an enum")
			}
		})
	}
	if enums < 2 {
		t.Fatalf("found %d enums", enums)
	}
}

// wrap puts v in as many lists as typ has.
func wrap(typ *ast.Type, v any) any {
	if typ.Elem == nil {
		return v
	}
	return []any{wrap(typ.Elem, v)}
}

// TestStrictInputsNestedInputObjects checks an enum inside an input object
// inside a list (the schema has no such argument; the check is generic).
func TestStrictInputsNestedInputObjects(t *testing.T) {
	s := strictInputs{schema: NewExecutableSchema(Config{Resolvers: &Resolver{}}).Schema()}
	typ := ast.ListType(ast.NonNullNamedType("UpdateTaskInput", nil), nil)
	ok := []any{map[string]any{"id": "x", "status": "DONE"}}
	if msg := s.check(typ, ok); msg != "" {
		t.Fatalf("a valid input: %q", msg)
	}
	bad := []any{map[string]any{"id": "x", "status": "DONE"}, map[string]any{"id": "y", "status": "Done"}}
	if msg := s.check(typ, bad); !strings.Contains(msg, `at [1]: at "status"`) || !strings.Contains(msg, "TaskStatus") {
		t.Fatalf("got %q", msg)
	}
}
