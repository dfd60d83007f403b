package app

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
)

const (
	// saveEvery is how often the saver looks whether the embedded store's
	// journal has grown enough for a new snapshot (dynamo.DataFile.Run).
	saveEvery = 2 * time.Second
	// comfortableItems is the table size past which the embedded store's
	// start and snapshots take seconds (docs/operations.md: "How big the
	// embedded store can get"); its calls cost the same at any size.
	comfortableItems = 100_000
)

// moveAdvice tells how to move the embedded store's data to a real endpoint.
const moveAdvice = "the embedded store keeps the whole table in memory (about 800 bytes an item), loads it at every start " +
	"and rewrites its snapshot as writes come: about a second of CPU each per 100,000 items; " +
	"to move the data to DynamoDB Local, dynalite or AWS: go run . export > dump.jsonl, then " +
	"AWS_ENDPOINT_URL_DYNAMODB=http://… go run . import < dump.jsonl"

// Table is the table a Config names, open: for the App, the commands and
// the start's benchmark.
type Table struct {
	Store *dynamo.Store
	// Data is the embedded store's data file; nil on DynamoDB and in
	// memory only (-data-dir=).
	Data *dynamo.DataFile
	// Fresh reports a new, empty table: created now, no data file.
	Fresh bool

	close func()
}

// Close stops the embedded store (its journal's last flush; no snapshot:
// the App's Close saves one first) and releases the data directory.
func (t *Table) Close() { t.close() }

// OpenTable opens the table c names: on the embedded store (its data
// directory locked, its data file loaded, when there is one) or on
// DynamoDB through the SDK's configuration, creating the table when
// missing if -create-table.
func OpenTable(ctx context.Context, c Config, log *slog.Logger) (*Table, error) {
	db, emb, closeDB, err := openClient(ctx, c, log)
	if err != nil {
		return nil, err
	}
	t := &Table{Store: NewStore(db, c.Table, log, nil), close: closeDB}
	t.Store.SyncRetention = c.SyncRetention
	if err := t.ensure(ctx, c, emb != nil); err != nil {
		closeDB()
		return nil, fmt.Errorf("table %s: %w", c.Table, err)
	}
	if emb == nil {
		return t, nil
	}
	if c.DataDir == "" {
		log.Info("using the embedded in-process store in memory only (-data-dir is empty): the data is gone when the process ends")
		return t, nil
	}
	if err := t.load(ctx, c, emb, log); err != nil {
		closeDB()
		return nil, err
	}
	return t, nil
}

// openClient returns the DynamoDB client c's store kind names, with the
// production client options (client.Options), and what stops it: the
// embedded store (started on its data directory, locked) or the SDK's
// client of DynamoDB.
func openClient(ctx context.Context, c Config, log *slog.Logger) (db *dynamodb.Client, emb *embedded.Store, closeDB func(), err error) {
	switch c.StoreKind {
	case "embedded":
		release := func() {}
		if c.DataDir != "" { // memory only: nothing to share, no lock
			if release, err = lockDataDir(c.DataDir, c.Command); err != nil {
				return nil, nil, nil, err
			}
		}
		if emb, err = embedded.Start(); err != nil {
			release()
			return nil, nil, nil, fmt.Errorf("starting the embedded store: %w", err)
		}
		closeDB = func() {
			if err := emb.Close(); err != nil { // the journal's last flush: what was answered may not be on disk
				log.Error("closing the embedded store", "err", err)
			}
			release()
		}
		return emb.Client(client.Options()...), emb, closeDB, nil
	case "aws":
		cfg, err := awsConfig(ctx, c.aws)
		if err != nil {
			return nil, nil, nil, err
		}
		log.Info("using DynamoDB", "region", cfg.Region)
		return dynamodb.NewFromConfig(cfg, client.Options()...), nil, func() {}, nil
	}
	return nil, nil, nil, fmt.Errorf("-store must be auto, embedded or aws, not %q", c.StoreKind)
}

// ensure creates the table when missing if -create-table (always on the
// embedded store, which starts with none); otherwise it reads the markers
// of complete tag indexes and change logs that EnsureTable reads.
func (t *Table) ensure(ctx context.Context, c Config, embedded bool) error {
	t.Store.BackfillRate = c.BackfillRate
	if c.CreateTable || embedded || c.Command == "migrate" {
		tctx, cancel := ctx, context.CancelFunc(func() {})
		if c.Command != "migrate" { // migrate waits as long as the indexes and backfills take
			tctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
		}
		defer cancel()
		var err error
		t.Fresh, err = t.Store.EnsureTable(tctx)
		return err
	}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := t.Store.DetectTagIndex(tctx); err != nil {
		return err
	}
	if missing, backfilling, err := t.Store.Pending(tctx); err != nil {
		return err
	} else if len(missing)+len(backfilling) > 0 {
		t.Store.Log.Error("the table lacks what this version reads: run the migrate command (docs/operations.md, \"Adding an index\")",
			"indexes", missing, "backfills", backfilling)
	}
	return t.Store.DetectChangeLog(tctx)
}

// load loads the embedded store's data file from c's data directory (its
// snapshot, then its journal replayed) and keeps the journal from now on.
func (t *Table) load(ctx context.Context, c Config, emb *embedded.Store, log *slog.Logger) error {
	if err := makeDataDir(c.DataDir); err != nil {
		return err
	}
	data := &dynamo.DataFile{Path: filepath.Join(c.DataDir, c.Table+".jsonl"), Store: t.Store, Embedded: emb,
		Comfortable: comfortableItems, JournalSync: c.JournalSync == "commit",
		Grown: func(n int) {
			log.Warn("the embedded store has grown past a comfortable size", "items", n, "advice", moveAdvice)
		}}
	data.Journal = dynamo.JournalPrefix(data.Path)
	n, found, err := data.Load(ctx)
	if err != nil {
		return fmt.Errorf("%w (move it away to start afresh)", err)
	}
	switch {
	case !found:
		log.Info("using the embedded in-process store; new data file", "file", data.Path)
	case n > comfortableItems:
		log.Warn("using the embedded in-process store", "file", data.Path, "items", n, "journal", data.Replayed, "advice", moveAdvice)
	default:
		log.Info("using the embedded in-process store", "file", data.Path, "items", n, "journal", data.Replayed)
	}
	t.Data, t.Fresh = data, t.Fresh && !found
	return nil
}

// openStore opens the App's store from its Config, unless it was given
// one: the table (OpenTable), the saver of the embedded store's data file
// (a snapshot every saveEvery once the journal has grown, and one at
// Close), and the demo data of a new embedded table.
func (a *App) openStore(ctx context.Context) error {
	if a.Store != nil {
		return nil
	}
	t, err := OpenTable(ctx, a.Config, a.Log)
	if err != nil {
		return err
	}
	a.opened(func() error { t.Close(); return nil })
	a.Store, a.Data = t.Store, t.Data
	if data := t.Data; data != nil {
		saver, stopSaver := context.WithCancel(ctx)
		saved := make(chan struct{})
		go func() { defer close(saved); data.Run(saver, saveEvery) }()
		a.opened(func() error {
			stopSaver()
			<-saved // no save of Run's may outlast this one, nor run into the store's close
			sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := data.Save(sctx); err != nil {
				return fmt.Errorf("saving the embedded store: %w", err)
			}
			return nil
		})
	}
	if t.Fresh && a.Config.Demo && a.Config.StoreKind == "embedded" {
		if err := a.Store.Import(ctx, a.Store.Demo(time.Now())); err != nil {
			return fmt.Errorf("loading demo data: %w", err)
		}
		a.Log.Info("loaded demo data", "users", "alice bob carol dave")
	}
	return nil
}

// awsConfig loads the SDK's own configuration. For a local endpoint
// (AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL) without credentials or
// region (e, from the environment read once) it fills in placeholders, as
// DynamoDB Local and dynalite accept any.
func awsConfig(ctx context.Context, e awsEnv) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if e.local && !e.region {
		opts = append(opts, config.WithRegion("us-east-1"))
	}
	if e.local && !e.credentials {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	return cfg, nil
}
