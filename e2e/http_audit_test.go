package e2e

import (
	"path/filepath"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestGraphQLOverHTTPAudit runs graphql-http's serverAudits, the reference
// suite of the GraphQL over HTTP spec, with clients/http/audit.mjs against
// an instance started as a plain start starts it (app.App: the default
// options, live updates on an embedded broker), a token on every request.
// Each audit is a subtest named by its id and name; any audit that is not
// ok, a MUST, a SHOULD or a MAY, fails it.
func TestGraphQLOverHTTPAudit(t *testing.T) {
	nodeModules := mustNodeTools(t)
	env := testenv.New(t)
	env.MustSeed(t)
	inst := startLiveInstanceWith(t, env, "", nil)
	runNodeChecks(t, nodeModules, filepath.Join("clients", "http", "audit.mjs"),
		map[string]string{"url": inst.URL + "/query", "token": env.Token(t, "alice")})
}
