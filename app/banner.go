package app

import (
	"context"
	"fmt"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// demoUser is the user whose token a development start prints: one of the
// demo data's users.
const demoUser = "alice"

// announce tells that the App serves, once everything is open: the demo
// token of a development start (banner), the live updates' setup, the
// address.
func (a *App) announce(ctx context.Context, p plan) {
	if a.DemoToken != "" {
		a.banner(ctx, p)
	}
	nats := "NATS_URL"
	if a.Broker.Embedded() {
		nats = "embedded"
	}
	a.Log.Info("live updates", "nats", nats, "state", a.Broker.State(), "retention", a.Config.Live.MaxAge, "cursorkey", p.cursorWhere)
	if a.URL != "" {
		a.Log.Info("serving", "addr", a.URL+"/", "table", a.Store.Table())
	}
}

// banner prints the demo token to Stdout, and what the table holds: the
// demo user, or no such user (a table without the demo data, which only a
// new embedded table gets).
func (a *App) banner(ctx context.Context, p plan) {
	if a.Stdout != nil {
		whose, other := fmt.Sprintf("A token for the demo user %s (valid %s):", demoUser, a.Config.TokenTTL), "bob"
		if !a.holdsDemoUser(ctx) {
			whose = fmt.Sprintf("A token for %s (valid %s), who is not in table %s: it holds no demo data "+
				"(the demo data goes into a new embedded table only):", demoUser, a.Config.TokenTTL, a.Store.Table())
			other = "USER"
		}
		fmt.Fprintf(a.Stdout, "\nJWT_SECRET is not set: using %s. %s\n\n  Authorization: Bearer %s\n\n"+
			"The GraphQL IDE at %s has it filled in. Tokens for other users: go run . token %s\n\n",
			p.devWhere, whose, a.DemoToken, browseURL(a.Config.Addr), other)
	}
	if !loopback(a.Config.Addr) {
		a.Log.Warn("listening beyond this machine: whoever reaches the server gets this token at /", "addr", a.Config.Addr)
	}
}

// holdsDemoUser reports whether the table holds the demo user's profile;
// a table that cannot be read is taken to hold it (the start goes on, and
// the first request tells).
func (a *App) holdsDemoUser(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, errs := a.Store.Get(ctx, []dynamo.Ref{dynamo.UserRef(demoUser)})
	return domain.ErrorCode(errs[0]) != domain.ENOTFOUND
}
