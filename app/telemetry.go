package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/taskgraph/taskgraph/internal/telemetry"
)

// startTelemetry sets up the traces (the OTEL_* Env) and, with
// -metrics-addr, the metrics and their own listener serving GET /metrics.
// The returned function stops both, flushing the spans still buffered,
// and returns once the listener's goroutine has ended. The
// telemetry is nil when neither is on.
func startTelemetry(ctx context.Context, s settings, log *slog.Logger) (*telemetry.Telemetry, func(), error) {
	tel, err := telemetry.New(ctx, telemetry.Config{Metrics: s.metricsAddr != "", Env: func(k string) string { return s.otel[k] }})
	if err != nil {
		return nil, nil, err
	}
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(sctx); err != nil {
			log.Warn("flushing the traces", "err", err)
		}
	}
	if s.metricsAddr == "" {
		log.Info("telemetry", "tracing", tel.Tracing(), "metrics", "off")
		return tel, stop, nil
	}
	ln, err := net.Listen("tcp", s.metricsAddr)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	log.Info("telemetry", "tracing", tel.Tracing(), "metrics", "http://"+ln.Addr().String()+"/metrics")
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", tel.MetricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener", "err", err)
		}
	}()
	return tel, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-served
		stop()
	}, nil
}
