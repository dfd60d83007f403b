package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/goccy/go-yaml"

	"github.com/taskgraph/taskgraph/dynamo"
)

// The committed template as a YAML parser reads it, in the shapes the tests
// compare.
type cfnTemplate struct {
	Parameters map[string]struct {
		Type    string `yaml:"Type"`
		Default string `yaml:"Default"`
	} `yaml:"Parameters"`
	Resources struct {
		Table struct {
			Type           string    `yaml:"Type"`
			DeletionPolicy string    `yaml:"DeletionPolicy"`
			Properties     tableSpec `yaml:"Properties"`
		} `yaml:"Table"`
		ServerPolicy struct {
			Type       string `yaml:"Type"`
			Properties struct {
				PolicyDocument struct {
					Version   string `yaml:"Version"`
					Statement []struct {
						Effect   string           `yaml:"Effect"`
						Action   []string         `yaml:"Action"`
						Resource []map[string]any `yaml:"Resource"`
					} `yaml:"Statement"`
				} `yaml:"PolicyDocument"`
			} `yaml:"Properties"`
		} `yaml:"ServerPolicy"`
	} `yaml:"Resources"`
	Outputs map[string]struct {
		Value map[string]any `yaml:"Value"`
	} `yaml:"Outputs"`
}

type tableSpec struct {
	TableName              map[string]any `yaml:"TableName"`
	BillingMode            string         `yaml:"BillingMode"`
	AttributeDefinitions   []attrDef      `yaml:"AttributeDefinitions"`
	KeySchema              []keyElem      `yaml:"KeySchema"`
	GlobalSecondaryIndexes []gsiSpec      `yaml:"GlobalSecondaryIndexes"`
	TimeToLive             struct {
		AttributeName string `yaml:"AttributeName"`
		Enabled       bool   `yaml:"Enabled"`
	} `yaml:"TimeToLiveSpecification"`
	PointInTimeRecovery struct {
		Enabled bool `yaml:"PointInTimeRecoveryEnabled"`
	} `yaml:"PointInTimeRecoverySpecification"`
	DeletionProtectionEnabled bool `yaml:"DeletionProtectionEnabled"`
	SSE                       struct {
		Enabled bool `yaml:"SSEEnabled"`
	} `yaml:"SSESpecification"`
}

type attrDef struct {
	AttributeName string `yaml:"AttributeName"`
	AttributeType string `yaml:"AttributeType"`
}

type keyElem struct {
	AttributeName string `yaml:"AttributeName"`
	KeyType       string `yaml:"KeyType"`
}

type gsiSpec struct {
	IndexName  string    `yaml:"IndexName"`
	KeySchema  []keyElem `yaml:"KeySchema"`
	Projection struct {
		ProjectionType   string   `yaml:"ProjectionType"`
		NonKeyAttributes []string `yaml:"NonKeyAttributes"`
	} `yaml:"Projection"`
}

func mustTemplate(tb testing.TB) ([]byte, cfnTemplate) {
	tb.Helper()
	b, err := os.ReadFile("cloudformation.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	var t cfnTemplate
	if err := yaml.Unmarshal(b, &t); err != nil {
		tb.Fatalf("cloudformation.yaml is no YAML: %v", err)
	}
	return b, t
}

func TestTemplateIsCurrent(t *testing.T) {
	committed, _ := mustTemplate(t)
	want, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, want) {
		t.Fatal("deploy/cloudformation.yaml is out of date with dynamo.TableDefinition or deploy/main.go: run 'go generate ./deploy' and commit it")
	}
}

// The parsed template, not the generator's input, is compared with the Go
// definition: this also proves the emitter writes what it means.
func TestTemplateTableIsTableDefinition(t *testing.T) {
	_, tpl := mustTemplate(t)
	def := dynamo.TableDefinition("x")
	got := tpl.Resources.Table.Properties

	var wantAttrs []attrDef
	for _, a := range def.AttributeDefinitions {
		wantAttrs = append(wantAttrs, attrDef{*a.AttributeName, string(a.AttributeType)})
	}
	var wantGSIs []gsiSpec
	for _, g := range def.GlobalSecondaryIndexes {
		s := gsiSpec{IndexName: *g.IndexName, KeySchema: keySchemaOf(g.KeySchema)}
		s.Projection.ProjectionType = string(g.Projection.ProjectionType)
		s.Projection.NonKeyAttributes = g.Projection.NonKeyAttributes
		wantGSIs = append(wantGSIs, s)
	}

	checks := []struct {
		name      string
		got, want any
	}{
		{"the resource is a DynamoDB table", tpl.Resources.Table.Type, "AWS::DynamoDB::Table"},
		{"the table outlives its stack", tpl.Resources.Table.DeletionPolicy, "Retain"},
		{"the name is the TableName parameter", got.TableName, map[string]any{"Ref": "TableName"}},
		{"the parameter defaults to the server's table", tpl.Parameters["TableName"].Default, "task-manager"},
		{"billing", got.BillingMode, string(def.BillingMode)},
		{"attribute definitions", got.AttributeDefinitions, wantAttrs},
		{"key schema", got.KeySchema, keySchemaOf(def.KeySchema)},
		{"global secondary indexes", got.GlobalSecondaryIndexes, wantGSIs},
		{"time to live on the store's expiry attribute", got.TimeToLive.AttributeName, dynamo.TTLAttribute},
		{"time to live enabled", got.TimeToLive.Enabled, true},
		{"point-in-time recovery", got.PointInTimeRecovery.Enabled, true},
		{"deletion protection", got.DeletionProtectionEnabled, true},
		{"encryption at rest", got.SSE.Enabled, true},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("template has %#v, want %#v", c.got, c.want)
			}
		})
	}
	t.Run("the idempotency records expire on the TTL attribute", func(t *testing.T) {
		tag := `dynamodbav:"` + dynamo.TTLAttribute + `"`
		for _, f := range dynamoSources(t) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(tag)) {
				return
			}
		}
		t.Errorf("no field of the dynamo package is tagged %s: the TTL attribute is not the one the store writes", tag)
	})
}

func keySchemaOf(ks []types.KeySchemaElement) []keyElem {
	var out []keyElem
	for _, k := range ks {
		out = append(out, keyElem{*k.AttributeName, string(k.KeyType)})
	}
	return out
}

// dynamoSources are the dynamo package's non-test Go files.
func dynamoSources(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "dynamo", "*.go"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no dynamo sources (%v)", err)
	}
	return slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
}

// clientOps are the names of the DynamoDB client's operations: the methods
// of *dynamodb.Client that take a *dynamodb.<Name>Input.
func clientOps() map[string]bool {
	ops := map[string]bool{}
	c := reflect.TypeOf(&dynamodb.Client{})
	for i := range c.NumMethod() {
		mt := c.Method(i).Type // receiver, ctx, input, options
		if mt.NumIn() == 4 && mt.In(2).Kind() == reflect.Pointer && mt.In(2).Elem().Name() == c.Method(i).Name+"Input" {
			ops[c.Method(i).Name] = true
		}
	}
	return ops
}

var paginator = regexp.MustCompile(`^New(\w+)Paginator$`)

// storeCalls scans the dynamo package's sources for the DynamoDB operations
// it calls (x.Op(…) with Op an operation of the client, or
// dynamodb.NewOpPaginator) and the kinds of items its transactions hold
// (types.TransactWriteItem{Kind: …}).
func storeCalls(tb testing.TB) (calls, transactKinds map[string]bool) {
	tb.Helper()
	ops := clientOps()
	calls, transactKinds = map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range dynamoSources(tb) {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			tb.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "dynamodb" {
					if m := paginator.FindStringSubmatch(sel.Sel.Name); m != nil {
						calls[m[1]] = true
					}
					return true
				}
				if ops[sel.Sel.Name] {
					calls[sel.Sel.Name] = true
				}
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "TransactWriteItem" {
					for _, e := range n.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok {
							transactKinds[kv.Key.(*ast.Ident).Name] = true
						}
					}
				}
			}
			return true
		})
	}
	return calls, transactKinds
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// notForTheServer are calls the server's policy leaves out: the table's
// creation and its indexes' (-create-table; the stack owns the table), and
// the Scan of the export and migrate commands (an operator's job;
// docs/operations.md).
var notForTheServer = map[string]bool{"CreateTable": true, "UpdateTimeToLive": true, "UpdateTable": true, "Scan": true}

// A new DynamoDB call in the dynamo package fails this test until the policy
// (ServerActions, then go generate ./deploy) grants it.
func TestPolicyGrantsExactlyTheStoresCalls(t *testing.T) {
	_, tpl := mustTemplate(t)
	calls, kinds := storeCalls(t)
	want := map[string]bool{}
	for op := range calls {
		switch {
		case notForTheServer[op]:
		case op == "TransactWriteItems": // authorized per item: IAM has no TransactWriteItems action
			for k := range kinds {
				want[map[string]string{"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem"}[k]] = true
			}
		case op == "TransactGetItems":
			want["GetItem"] = true
		default:
			want[op] = true
		}
	}
	if len(kinds) == 0 || !calls["Query"] || !calls["GetItem"] {
		t.Fatalf("the scan of the dynamo package found too little (calls %v, transaction items %v)", sortedKeys(calls), sortedKeys(kinds))
	}
	pol := tpl.Resources.ServerPolicy
	if pol.Type != "AWS::IAM::ManagedPolicy" || len(pol.Properties.PolicyDocument.Statement) != 1 {
		t.Fatalf("ServerPolicy: want one AWS::IAM::ManagedPolicy statement, got %s with %d", pol.Type, len(pol.Properties.PolicyDocument.Statement))
	}
	st := pol.Properties.PolicyDocument.Statement[0]
	var got []string
	for _, a := range st.Action {
		op, ok := strings.CutPrefix(a, "dynamodb:")
		if !ok {
			t.Errorf("action %q is not a DynamoDB action", a)
		}
		got = append(got, op)
	}
	sort.Strings(got)
	if w := sortedKeys(want); !slices.Equal(got, w) {
		t.Errorf("policy grants %v, the dynamo package calls for %v (left out on purpose: %v)", got, w, sortedKeys(notForTheServer))
	}
	if st.Effect != "Allow" {
		t.Errorf("effect %q, want Allow", st.Effect)
	}
	wantRes := []map[string]any{{"Fn::GetAtt": []any{"Table", "Arn"}}, {"Fn::Sub": "${Table.Arn}/index/*"}}
	if !reflect.DeepEqual(st.Resource, wantRes) {
		t.Errorf("resources %#v, want only the table and its indexes %#v", st.Resource, wantRes)
	}
}

func TestTemplateOutputs(t *testing.T) {
	_, tpl := mustTemplate(t)
	want := map[string]map[string]any{
		"TableName":       {"Ref": "Table"},
		"TableArn":        {"Fn::GetAtt": []any{"Table", "Arn"}},
		"ServerPolicyArn": {"Ref": "ServerPolicy"},
	}
	for name, v := range want {
		if got := tpl.Outputs[name].Value; !reflect.DeepEqual(got, v) {
			t.Errorf("output %s is %#v, want %#v", name, got, v)
		}
	}
}
