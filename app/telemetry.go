package app

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/taskgraph/taskgraph/internal/telemetry"
)

// openTelemetry sets up the App's traces (the OTEL_* variables) and, with
// -metrics-addr, the metrics, served at GET /metrics on their own listener
// (bound by listen), unless the App was given its telemetry. Close stops
// both, flushing the spans still buffered, once the listener's goroutine
// has ended. The telemetry is nil when neither is on.
func (a *App) openTelemetry(ctx context.Context) error {
	if a.Telemetry != nil {
		return nil
	}
	c, log := a.Config, a.Log
	tel, err := telemetry.New(ctx, telemetry.Config{Metrics: a.metrics != nil, Env: func(k string) string { return c.otel[k] }})
	if err != nil {
		return err
	}
	a.Telemetry = tel
	a.opened(func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(sctx); err != nil {
			log.Warn("flushing the traces", "err", err)
		}
		return nil
	})
	if a.metrics == nil {
		log.Info("telemetry", "tracing", tel.Tracing(), "metrics", "off")
		return nil
	}
	log.Info("telemetry", "tracing", tel.Tracing(), "metrics", "http://"+a.metrics.Addr().String()+"/metrics")
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", tel.MetricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(a.metrics); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener", "err", err)
		}
	}()
	a.opened(func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-served
		return nil
	})
	return nil
}
