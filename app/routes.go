package app

import (
	"net/http"

	"github.com/taskgraph/taskgraph/ide"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

// routes routes the server's paths: /query (the App's Handler), GET / (the
// GraphiQL IDE, with the demo token filled in, and its assets under /ide/;
// not in production) and GET /healthz (web.Health: 200 while the table
// can be reached, the broker's state in its body), every one behind the
// Host check (healthz open to any Host).
func (a *App) routes(p plan) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/query", a.Handler)
	if !a.Config.Production {
		headers := map[string]string{}
		if a.DemoToken != "" {
			headers["Authorization"] = "Bearer " + a.DemoToken
		}
		mux.Handle("GET /{$}", ide.Page("taskgraph", "/query", headers, ide.Example))
		mux.Handle("GET "+ide.Prefix, ide.Assets())
	}
	mux.Handle("GET "+healthPath, web.Health(a.Store.Ping, func() *live.Broker { return a.Broker }))
	return p.hosts.handler(mux)
}
