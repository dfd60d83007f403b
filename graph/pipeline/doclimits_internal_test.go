package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
)

// A document in the query cache was checked (and validated) when it was
// added: it is not parsed and counted again.
func TestDocumentLimitsSkipCachedDocuments(t *testing.T) {
	ctx := context.Background()
	cache := lru.New[*ast.QueryDocument](10)
	l := newDocumentLimits(Options{Limits: Limits{MaxRepeats: 1}}, cache)
	q := "{ me { " + strings.Repeat("id ", 2) + "} }"
	if err := l.MutateOperationParameters(ctx, &graphql.RawParams{Query: q}); err == nil {
		t.Fatal("not refused before the document is cached")
	}
	cache.Add(ctx, q, &ast.QueryDocument{})
	if err := l.MutateOperationParameters(ctx, &graphql.RawParams{Query: q}); err != nil {
		t.Fatalf("a cached document was checked again: %v", err)
	}
}
