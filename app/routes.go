package app

import (
	"context"
	"net/http"
	"time"

	"github.com/taskgraph/taskgraph/ide"
)

// routes routes the server's paths: /query (the App's Handler), GET / (the
// GraphiQL IDE, with the demo token filled in, and its assets under /ide/;
// not in production) and GET /healthz (200 while the table can be
// reached), every one behind the Host check (healthz open to any Host).
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
	store := a.Store
	mux.HandleFunc("GET "+healthPath, func(w http.ResponseWriter, r *http.Request) {
		c, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := store.Ping(c); err != nil {
			http.Error(w, "table unreachable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return p.hosts.handler(mux)
}
