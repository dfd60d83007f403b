package pipeline_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/web"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// opName is the operation name of every generated document; the benchmark
// replaces it with a new name of the same length for each request, so that
// no request finds its document in the handler's query cache.
const opName = "Q00000000"

// requests numbers the benchmark's requests, for their operation names.
var requests atomic.Int64

// docShape generates a document of n repeated units of one of the shapes
// whose parse and validation cost grows faster than their size.
type docShape struct {
	name string
	gen  func(n int) string
}

func repeat(n int, f func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(f(i))
	}
	return b.String()
}

func unit(s string) func(int) string { return func(int) string { return s } }

var docShapes = []docShape{
	{"baseline", func(int) string { return "query " + opName + " { me { id } }" }},
	// n identical leaf fields: the overlap rule compares every pair.
	{"repeatedFields", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, unit("id ")) + "} }"
	}},
	// n identical object fields: every pair, and their selections.
	{"repeatedObjectFields", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, unit("projects { nodes { id } } ")) + "} }"
	}},
	// n fields of one response name with different arguments: every pair
	// conflicts.
	{"conflictingAliases", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, func(i int) string { return fmt.Sprintf("p: projects(first: %d) { nodes { id } } ", i%100+1) }) + "} }"
	}},
	// n distinct aliases of one field with different arguments.
	{"distinctAliases", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, func(i int) string { return fmt.Sprintf("p%d: projects(first: %d) { nodes { id } } ", i, i%100+1) }) + "} }"
	}},
	// n spreads of one fragment.
	{"spreadsOfOneFragment", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, unit("...F ")) + "} } fragment F on User { id }"
	}},
	// n fragments, each spread once: the overlap rule compares every pair
	// of fragments.
	{"manyFragments", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, func(i int) string { return fmt.Sprintf("...F%d ", i) }) + "} } " +
			repeat(n, func(i int) string { return fmt.Sprintf("fragment F%d on User { id } ", i) })
	}},
	// n fragments of distinct response names: no field pairs, every pair
	// of fragments.
	{"manyDistinctFragments", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, func(i int) string { return fmt.Sprintf("...F%d ", i) }) + "} } " +
			repeat(n, func(i int) string { return fmt.Sprintf("fragment F%d on User { a%d: id } ", i, i) })
	}},
	// n fields and n fragments of the same field: fields × fragments.
	{"fieldsAndFragments", func(n int) string {
		return "query " + opName + " { me { " + repeat(4*n, unit("id ")) + repeat(n, func(i int) string { return fmt.Sprintf("...F%d ", i) }) + "} } " +
			repeat(n, func(i int) string { return fmt.Sprintf("fragment F%d on User { id } ", i) })
	}},
	// a chain of n fragments, each spreading the next: the validator walks
	// every fragment from every fragment before it.
	{"fragmentChain", func(n int) string {
		return "query " + opName + " { me { ...F0 } } " + repeat(n, func(i int) string {
			if i == n-1 {
				return fmt.Sprintf("fragment F%d on User { id } ", i)
			}
			return fmt.Sprintf("fragment F%d on User { id ...F%d } ", i, i+1)
		})
	}},
	// n selection sets of distinct response names, each spreading the head
	// of a chain of 50 fragments: the overlap rule compares each set with
	// every fragment of the chain.
	{"setsSpreadingAChain", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, func(i int) string { return fmt.Sprintf("a%d: projects { nodes { owner { ...F0 } } } ", i) }) + "} } " +
			repeat(50, func(i int) string {
				if i == 49 {
					return fmt.Sprintf("fragment F%d on User { b%d: id } ", i, i)
				}
				return fmt.Sprintf("fragment F%d on User { b%d: id ...F%d } ", i, i, i+1)
			})
	}},
	// a binary tree of n fragments.
	{"fragmentTree", func(n int) string {
		return "query " + opName + " { me { ...F0 } } " + repeat(n, func(i int) string {
			s := fmt.Sprintf("fragment F%d on User { id ", i)
			for _, c := range []int{2*i + 1, 2*i + 2} {
				if c < n {
					s += fmt.Sprintf("...F%d ", c)
				}
			}
			return s + "} "
		})
	}},
	// a chain of n fragments, each spreading the next twice: 2^n fields
	// once expanded.
	{"fragmentDoublingChain", func(n int) string {
		return "query " + opName + " { me { ...F0 } } " + repeat(n, func(i int) string {
			if i == n-1 {
				return fmt.Sprintf("fragment F%d on User { id } ", i)
			}
			return fmt.Sprintf("fragment F%d on User { ...F%d ...F%d } ", i, i+1, i+1)
		})
	}},
	// a chain of n fragments, each spreading the next on two paths of
	// distinct response names: 2^n fields once expanded, none merged.
	{"fragmentDoublingPaths", func(n int) string {
		return "query " + opName + " { me { ...F0 } } " + repeat(n, func(i int) string {
			if i == n-1 {
				return fmt.Sprintf("fragment F%d on User { id } ", i)
			}
			return fmt.Sprintf("fragment F%d on User { a: projects { nodes { owner { ...F%d } } } b: projects { nodes { owner { ...F%d } } } } ", i, i+1, i+1)
		})
	}},
	// the same as fragmentDoublingChain, of __typename only, which needs no
	// token.
	{"fragmentDoublingChainAnonymous", func(n int) string {
		return "query " + opName + " { ...F0 } " + repeat(n, func(i int) string {
			if i == n-1 {
				return fmt.Sprintf("fragment F%d on Query { __typename } ", i)
			}
			return fmt.Sprintf("fragment F%d on Query { ...F%d ...F%d } ", i, i+1, i+1)
		})
	}},
	// n operations, each spreading one fragment of n fields.
	{"operationsTimesFragment", func(n int) string {
		return "query " + opName + " { me { ...F } } " + repeat(n, func(i int) string { return fmt.Sprintf("query O%d { me { ...F } } ", i) }) +
			"fragment F on User { " + repeat(2*n, unit("id ")) + "}"
	}},
	// n inline fragments.
	{"inlineFragments", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, unit("... on User { id } ")) + "} }"
	}},
	// n inline fragments nested in one another.
	{"nestedInlineFragments", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, unit("... on User { id ")) + strings.Repeat("} ", n) + "} }"
	}},
	// n inline fragments nested in one another around n distinct fields:
	// each inline fragment collects all of them.
	{"nestedInlineFragmentsAroundFields", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, unit("... on User { ")) + repeat(n, func(i int) string { return fmt.Sprintf("a%d: id ", i) }) +
			strings.Repeat("} ", n) + "} }"
	}},
	// n directives on one field.
	{"directivesOnOneField", func(n int) string {
		return "query " + opName + " { me { id " + repeat(n, unit("@include(if: true) ")) + "} }"
	}},
	// n distinct aliases with a directive each.
	{"aliasesWithDirectives", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, func(i int) string { return fmt.Sprintf("a%d: id @include(if: true) ", i) }) + "} }"
	}},
	// n fields with a directive each.
	{"fieldsWithDirectives", func(n int) string {
		return "query " + opName + " { me { " + repeat(n, unit("id @include(if: true) ")) + "} }"
	}},
	// n variables, each used once.
	{"variables", func(n int) string {
		return "query " + opName + "(" + repeat(n, func(i int) string { return fmt.Sprintf("$v%d: Boolean = true ", i) }) + ") { me { " +
			repeat(n, func(i int) string { return fmt.Sprintf("a%d: id @include(if: $v%d) ", i, i) }) + "} }"
	}},
	// n variables used by every field: usages × definitions.
	{"variablesUsedOften", func(n int) string {
		return "query " + opName + "(" + repeat(n, func(i int) string { return fmt.Sprintf("$v%d: Boolean ", i) }) + ") { me { " +
			repeat(n, func(i int) string { return fmt.Sprintf("a%d: id @include(if: $v%d) ", i, n-1-i) }) + "} }"
	}},
	// n arguments on one field.
	{"arguments", func(n int) string {
		return "query " + opName + " { me { projects(" + repeat(n, unit("first: 1 ")) + ") { nodes { id } } } }"
	}},
	// a list argument of n strings.
	{"longList", func(n int) string {
		return "mutation " + opName + " { createTask(input: { projectId: \"x\", title: \"t\", tags: [" + repeat(n, unit(`"tag" `)) + "] }) { id } }"
	}},
	// a list nested n levels.
	{"nestedList", func(n int) string {
		return "mutation " + opName + " { createTask(input: { projectId: \"x\", title: \"t\", tags: " + strings.Repeat("[", n) + `"a"` + strings.Repeat("]", n) + " }) { id } }"
	}},
	// an input object of n fields.
	{"inputObjectFields", func(n int) string {
		return "mutation " + opName + " { createTask(input: { " + repeat(n, unit(`title: "t" `)) + "}) { id } }"
	}},
	// one string argument as long as the body allows.
	{"longString", func(n int) string {
		return "query " + opName + " { tasksByTag(tag: \"" + strings.Repeat("a", n) + "\") { nodes { id } } }"
	}},
}

// cpuTime is the CPU time the process has used (user and system), which,
// unlike ns/op, does not grow when other processes share the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// requestBody is the JSON body that posts doc.
func requestBody(doc, name string) string {
	b, _ := json.Marshal(map[string]string{"query": doc, "operationName": name})
	return string(b)
}

// admitted tells whether the server's limits let doc reach validation: the
// parser's token limit, the body size and graph's document limits.
func admitted(doc string) bool {
	if len(requestBody(doc, opName)) > web.DefaultMaxBodyBytes {
		return false
	}
	_, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: doc}, pipeline.DefaultMaxTokens)
	if err != nil {
		return false
	}
	if n := pipeline.DocumentNodes(doc); n > 1_000_000 {
		// The merging walk of the check would take as long: only the node
		// limit refuses these documents, if it is there.
		return n <= pipeline.DefaultMaxNodes
	}
	return pipeline.DocumentWithinLimits(doc)
}

// largest returns the shape's document with the most units the server
// admits (admission is monotonic in n for every shape).
func largest(s docShape) (string, int) {
	if !admitted(s.gen(1)) {
		panic(s.name + ": one unit is not admitted")
	}
	if s.gen(1) == s.gen(2) { // no units
		return s.gen(1), 1
	}
	lo, hi := 1, 2
	for admitted(s.gen(hi)) {
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; admitted(s.gen(mid)) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return s.gen(lo), lo
}

// BenchmarkParseValidate posts, for each shape, the largest document the
// server admits to the real handler (a new operation name each time, so the
// query cache never answers) and reports the time per request. The requests
// carry no token, so they run exactly what comes before execution (the
// handler's transports and extensions: parsing, validation, the operation
// parameter and context mutators, then the operation middleware, where
// requireViewer refuses them) and read nothing; compare with baseline for
// the cost of the rest of the request. The goal is at most 20 ms a shape:
//
//	go test ./graph -run '^$' -bench ParseValidate -benchtime 20x
func BenchmarkParseValidate(b *testing.B) {
	e := testenv.New(b)
	docs, units := make([]string, len(docShapes)), make([]int, len(docShapes))
	for i, s := range docShapes {
		docs[i], units[i] = largest(s)
	}
	for i, s := range docShapes {
		doc, n := docs[i], units[i]
		b.Run(s.name, func(b *testing.B) {
			runtime.GC() // not the garbage of what came before
			cpu0 := cpuTime()
			for b.Loop() {
				name := fmt.Sprintf("Q%08d", requests.Add(1)%100_000_000)
				body := requestBody(strings.Replace(doc, opName, name, 1), name)
				e.Send(b, nil, testenv.RawBody(http.MethodPost, "application/json", body)) // the body as requestBody writes it
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(n), "units") // after the loop, which resets metrics
			b.ReportMetric(float64(len(doc)), "bytes")
		})
	}
}
