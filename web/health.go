package web

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/taskgraph/taskgraph/live"
)

// HealthReport is the body of GET /healthz. Status is "ok" (the table
// answers and live updates run), "degraded" (the table answers, live
// updates do not: mutations work, their events wait in the outbox) or
// "unavailable" (the table does not answer). Only "unavailable" is a 503:
// an instance whose table answers serves its API, so a load balancer keeps
// it, whatever its broker does.
type HealthReport struct {
	Status string `json:"status"`
	// Table is "ok" or "unreachable".
	Table string `json:"table"`
	// Live is the event broker's state (nil without live updates).
	Live *live.Health `json:"live,omitempty"`
}

// healthTimeout bounds the table's check.
const healthTimeout = 2 * time.Second

// Health serves GET /healthz: ping checks the table (the store's
// DescribeTable), broker, when not nil, is asked for its state (no call:
// the broker knows it).
func Health(ping func(context.Context) error, broker func() *live.Broker) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		defer cancel()
		rep := HealthReport{Status: "ok", Table: "ok"}
		code := http.StatusOK
		if err := ping(ctx); err != nil {
			rep.Status, rep.Table, code = "unavailable", "unreachable", http.StatusServiceUnavailable
		}
		if broker != nil {
			if b := broker(); b != nil {
				h := b.Health()
				rep.Live = &h
				if !h.Ready() && code == http.StatusOK {
					rep.Status = "degraded"
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(rep)
	})
}
