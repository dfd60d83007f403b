package app

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/dynamo"
)

// The embedded store's data directory (-data-dir, DATA_DIR; default
// .taskgraph under the working directory) holds:
//
//   - <table>.jsonl: the table, a snapshot (a dump of version 3, see
//     dynamo.ReadDump) replaced whole once the journal has grown by
//     dynamo.DefaultSnapshotRecords records or DefaultSnapshotBytes (looked
//     at every saveEvery, store.go), and at shutdown (dynamo.DataFile: taken from a
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
	devSecretFile = "dev-secret"
	lockFileName  = "lock"
)

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
