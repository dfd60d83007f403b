package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/dynamo/embedded"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/wire"
)

// The embedded store's data directory (-data-dir, DATA_DIR; default
// .taskgraph under the working directory) holds:
//
//   - <table>.jsonl: the table, a snapshot (a dump of version 3, see
//     dynamo.ReadDump) replaced whole once the journal has grown by
//     dynamo.DefaultSnapshotRecords records or DefaultSnapshotBytes (looked
//     at every saveEvery), and at shutdown (dynamo.DataFile: taken from a
//     copy-on-write view of the table, written beside, flushed, renamed,
//     directory flushed);
//   - <table>.journal.<n>: the journal, every write answered since that
//     snapshot, appended before the write is answered (flushed to disk
//     first with -journal-sync=commit), replayed over the snapshot at start
//     and cut once the next snapshot is written: a crash loses no answered
//     write (embedded.Store.StartJournal);
//   - dev-secret: the HS256 secret made when JWT_SECRET is not set (mode
//     0600), so that tokens stay valid across restarts;
//   - lock: the lock file (lockDataDir), which says which process holds the
//     directory;
//   - .gitignore: "*", so that the directory is never committed.
const (
	saveEvery     = 2 * time.Second
	devSecretFile = "dev-secret"
	lockFileName  = "lock"
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

// openStore opens the table the settings name: on the embedded store
// (loading its data file, when there is a data directory) or on DynamoDB
// through the SDK's configuration, creating the table when missing if
// -create-table. data is the embedded store's data file (nil without one);
// fresh reports a new, empty table (created now, no data file). closeStore stops
// the embedded store.
func openStore(ctx context.Context, s settings, log *slog.Logger) (store *dynamo.Store, data *dynamo.DataFile, fresh bool, closeStore func(), err error) {
	closeStore = func() {}
	var db *dynamodb.Client
	var emb *embedded.Store
	switch s.store {
	case "embedded":
		release := func() {}
		if s.dataDir != "" { // memory only: nothing to share, no lock
			if release, err = lockDataDir(s.dataDir, s.command); err != nil {
				return nil, nil, false, closeStore, err
			}
		}
		emb, err = embedded.Start()
		if err != nil {
			release()
			return nil, nil, false, closeStore, fmt.Errorf("starting the embedded store: %w", err)
		}
		closeStore = func() {
			if err := emb.Close(); err != nil { // the journal's last flush: what was answered may not be on disk
				log.Error("closing the embedded store", "err", err)
			}
			release()
		}
		db = emb.Client(client.Options()...)
	case "aws":
		cfg, err := awsConfig(ctx, s.aws)
		if err != nil {
			return nil, nil, false, closeStore, err
		}
		db = dynamodb.NewFromConfig(cfg, client.Options()...)
		log.Info("using DynamoDB", "region", cfg.Region)
	default:
		return nil, nil, false, closeStore, fmt.Errorf("-store must be auto, embedded or aws, not %q", s.store)
	}
	fail := func(err error) (*dynamo.Store, *dynamo.DataFile, bool, func(), error) {
		closeStore()
		return nil, nil, false, func() {}, err
	}

	store = wire.NewStore(db, s.table, log, nil)
	store.SyncRetention = s.syncRetention
	created := false
	if s.createTable || emb != nil { // the embedded store starts with no table
		tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		created, err = store.EnsureTable(tctx)
		cancel()
		if err != nil {
			return fail(fmt.Errorf("table %s: %w", s.table, err))
		}
	}
	if !s.createTable && emb == nil { // EnsureTable reads the markers of complete tag indexes and change logs otherwise
		tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = store.DetectTagIndex(tctx)
		if err == nil {
			err = store.DetectChangeLog(tctx)
		}
		cancel()
		if err != nil {
			return fail(fmt.Errorf("table %s: %w", s.table, err))
		}
	}
	if emb == nil {
		return store, nil, created, closeStore, nil
	}
	if s.dataDir == "" {
		log.Info("using the embedded in-process store in memory only (-data-dir is empty): the data is gone when the process ends")
		return store, nil, created, closeStore, nil
	}
	if err := makeDataDir(s.dataDir); err != nil {
		return fail(err)
	}
	data = &dynamo.DataFile{Path: filepath.Join(s.dataDir, s.table+".jsonl"), Store: store, Embedded: emb,
		Comfortable: comfortableItems, JournalSync: s.journalSync == "commit",
		Grown: func(n int) {
			log.Warn("the embedded store has grown past a comfortable size", "items", n, "advice", moveAdvice)
		}}
	data.Journal = dynamo.JournalPrefix(data.Path)
	n, found, err := data.Load(ctx)
	if err != nil {
		return fail(fmt.Errorf("%w (move it away to start afresh)", err))
	}
	switch {
	case !found:
		log.Info("using the embedded in-process store; new data file", "file", data.Path)
	case n > comfortableItems:
		log.Warn("using the embedded in-process store", "file", data.Path, "items", n, "journal", data.Replayed, "advice", moveAdvice)
	default:
		log.Info("using the embedded in-process store", "file", data.Path, "items", n, "journal", data.Replayed)
	}
	return store, data, created && !found, closeStore, nil
}

// errLocked is tryLock's error for a file another process (or another
// open file of this one) holds locked.
var errLocked = errors.New("locked")

// lockDataDir makes the data directory this process's until release is
// called (or the process ends, however it ends): an exclusive lock held by
// the operating system on its lock file (flock; LockFileEx on Windows),
// which then says who holds it (pid, host, command, start time). A second
// server, export or import on the directory is refused with an error
// naming the holder: two processes would each replay, journal and snapshot
// the same files, and one's snapshot would drop the other's writes.
// command is the command that takes it ("" for the server).
func lockDataDir(dir, command string) (release func(), err error) {
	if err := makeDataDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking the data directory: %w", err)
	}
	if err := tryLock(f); err != nil {
		_ = f.Close()
		if errors.Is(err, errLocked) {
			holder, _ := os.ReadFile(path)
			return nil, fmt.Errorf("the data directory %s is in use by another taskgraph process (%s; its lock file %s): "+
				"stop it first (export and import too need the directory to themselves), or give this one another -data-dir",
				dir, describeHolder(holder), path)
		}
		return nil, fmt.Errorf("locking the data directory %s: %w", dir, err)
	}
	if command == "" {
		command = "server"
	}
	host, _ := os.Hostname()
	who := fmt.Sprintf("pid %d\nhost %s\ncommand %s\nstarted %s\n", os.Getpid(), host, command, time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(who), 0) // a description only: the lock is what counts
	}
	return func() {
		_ = f.Truncate(0)
		_ = unlock(f)
		_ = f.Close()
	}, nil
}

// describeHolder turns a lock file's lines ("pid 12", "host h", …) into
// one line for an error.
func describeHolder(b []byte) string {
	var parts []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l = strings.TrimSpace(l); l != "" && len(l) < 200 {
			parts = append(parts, l)
		}
	}
	if len(parts) == 0 {
		return "which has not said who it is yet"
	}
	return strings.Join(parts, ", ")
}

// makeDataDir creates the data directory (owner only) with a .gitignore
// that keeps all of it out of git.
func makeDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	gi := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(gi); errors.Is(err, fs.ErrNotExist) {
		if err := dynamo.WriteFileAtomic(gi, []byte("# taskgraph's local data: never commit it\n*\n")); err != nil {
			return err
		}
	}
	return nil
}

// devSecret returns the development HS256 secret: the one kept in the data
// directory, made there on first use; with no data directory a random one
// for this process only. where says which, for the start-up message.
func devSecret(dataDir string) (secret []byte, where string, err error) {
	if dataDir == "" {
		var b [32]byte
		_, _ = rand.Read(b[:])
		return []byte(hex.EncodeToString(b[:])), "a random secret for this process only (-data-dir is empty)", nil
	}
	path := filepath.Join(dataDir, devSecretFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		sec := strings.TrimSpace(string(b))
		if len(sec) < 32 {
			return nil, "", fmt.Errorf("the development secret %s is too short (under 32 characters); delete it to make a new one", path)
		}
		return []byte(sec), "the development secret in " + path, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, "", fmt.Errorf("reading the development secret: %w", err)
	}
	if err := makeDataDir(dataDir); err != nil {
		return nil, "", err
	}
	var r [32]byte
	_, _ = rand.Read(r[:])
	sec := hex.EncodeToString(r[:])
	if err := dynamo.WriteFileAtomic(path, []byte(sec+"\n")); err != nil {
		return nil, "", fmt.Errorf("saving the development secret: %w", err)
	}
	return []byte(sec), "a new development secret, kept in " + path, nil
}
