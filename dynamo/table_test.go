package dynamo

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
)

// recordLog keeps every record of a slog logger, at every level.
type recordLog struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *recordLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *recordLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordLog) WithGroup(string) slog.Handler      { return h }

// text renders a record as the server's text log would.
func logLine(r slog.Record) string {
	var b bytes.Buffer
	_ = slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug}).Handle(context.Background(), r)
	return b.String()
}

func TestEmbeddedStartLogsNoError(t *testing.T) {
	emb, err := embedded.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = emb.Close() }()
	// Wired as the server wires the embedded store.
	s := New(emb.Client(client.Options()...), "start-log")
	h := &recordLog{}
	s.Log = slog.New(h)
	created, err := s.EnsureTable(context.Background())
	if err != nil || !created {
		t.Fatalf("EnsureTable = %v, %v; want a new table", created, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	saidTTL := false
	for _, r := range h.recs {
		line := logLine(r)
		if r.Level >= slog.LevelInfo {
			for _, bad := range []string{"error", "err=", "StatusCode", "deserialization", "400"} {
				if strings.Contains(line, bad) {
					t.Errorf("a start of the embedded store logs %q at %v: %s", bad, r.Level, line)
				}
			}
		}
		if r.Level == slog.LevelDebug && strings.Contains(r.Message, "no time to live") {
			saidTTL = true
		}
	}
	if !saidTTL {
		t.Errorf("no DEBUG record says the embedded store has no time to live; records: %d", len(h.recs))
	}
}
