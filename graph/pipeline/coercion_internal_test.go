package pipeline

import (
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/exec"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestStrictInputsCoverEveryEnum walks the schema's enums: for each, the
// input check refuses a name of another case, alone, in a list and in a
// list of lists, and takes every exact name, so an enum added later is
// strict without more code.
func TestStrictInputsCoverEveryEnum(t *testing.T) {
	s := strictInputs{schema: exec.NewExecutableSchema(exec.Config{}).Schema()}
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
					for _, wrong := range []string{strings.ToLower(v.Name), strings.ToLower(v.Name[:1]) + v.Name[1:], v.Name + " "} {
						in := wrap(typ, wrong)
						if bad := s.check(typ, in); bad == nil || !strings.Contains(bad.msg, def.Name) || bad.value != wrong {
							t.Errorf("%s %#v: %+v", typ, in, bad)
						}
					}
					if bad := s.check(typ, wrap(typ, v.Name)); bad != nil {
						t.Errorf("%s %s: %+v", typ, v.Name, bad)
					}
				}
			}
			if bad := s.check(types[0], 1); bad == nil {
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
	s := strictInputs{schema: exec.NewExecutableSchema(exec.Config{}).Schema()}
	typ := ast.ListType(ast.NonNullNamedType("UpdateTaskInput", nil), nil)
	ok := []any{map[string]any{"id": "x", "status": "DONE"}}
	if bad := s.check(typ, ok); bad != nil {
		t.Fatalf("a valid input: %+v", bad)
	}
	in := []any{map[string]any{"id": "x", "status": "DONE"}, map[string]any{"id": "y", "status": "Done"}}
	if bad := s.check(typ, in); bad == nil || bad.at != "[1].status" || bad.value != "Done" || !strings.Contains(bad.msg, "TaskStatus") {
		t.Fatalf("got %+v", bad)
	}
}
