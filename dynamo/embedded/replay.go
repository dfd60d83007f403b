package embedded

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// JournalFiles returns the journal files of prefix, oldest first, with
// their numbers.
func JournalFiles(prefix string) (paths []string, seqs []int, err error) {
	matches, err := filepath.Glob(prefix + ".*")
	if err != nil {
		return nil, nil, err
	}
	type file struct {
		path string
		seq  int
	}
	var files []file
	for _, m := range matches {
		n, err := strconv.Atoi(strings.TrimPrefix(m, prefix+"."))
		if err != nil || n <= 0 {
			continue // a snapshot's temporary file, a torn tail kept aside, anything else
		}
		files = append(files, file{m, n})
	}
	slices.SortFunc(files, func(a, b file) int { return a.seq - b.seq })
	for _, f := range files {
		paths, seqs = append(paths, f.path), append(seqs, f.seq)
	}
	return paths, seqs, nil
}

func journalPath(prefix string, seq int) string { return fmt.Sprintf("%s.%06d", prefix, seq) }

// Replay applies the records of prefix's journal files, oldest first, to
// the store, and returns how many it applied. Damage (see the journal's
// comment) is an error naming the file and the offset, and so is a file
// missing between two others. A torn last record of the newest file is
// dropped: its bytes are kept in a file beside it (kept), the file is cut
// to its whole records, and torn is called with the file, kept and why;
// the replay goes on. Replay must come before StartJournal.
func (e *Store) Replay(prefix string, torn func(path, kept string, err error)) (records int, err error) {
	paths, seqs, err := JournalFiles(prefix)
	if err != nil {
		return 0, err
	}
	for i, p := range paths {
		if i > 0 && seqs[i] != seqs[i-1]+1 {
			return records, fmt.Errorf("the journal file %s is missing (between %s and %s)",
				journalPath(prefix, seqs[i-1]+1), filepath.Base(paths[i-1]), filepath.Base(p))
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return records, fmt.Errorf("reading the journal: %w", err)
		}
		payloads, good, rerr := ReadRecords(bytes.NewReader(b))
		switch {
		case rerr == nil:
		case errors.Is(rerr, ErrTorn) && i == len(paths)-1:
			kept, err := keepTornTail(p, b, good)
			if err != nil {
				return records, err
			}
			if torn != nil {
				torn(p, kept, rerr)
			}
		case errors.Is(rerr, ErrTorn):
			return records, fmt.Errorf("the journal file %s is damaged: its last record is bad (%v), and newer journal files follow it", p, rerr)
		case errors.Is(rerr, ErrDamaged):
			return records, fmt.Errorf("the journal file %s is damaged: %v", p, rerr)
		default:
			return records, fmt.Errorf("reading the journal %s: %w", p, rerr)
		}
		eng := e.Server.Engine()
		for n, pl := range payloads {
			var rec rawRecord
			if err := json.Unmarshal(pl, &rec); err != nil {
				return records, fmt.Errorf("the journal %s, record %d: %w", p, n+1, err)
			}
			for _, im := range rec.W {
				var item []byte
				if len(im.Item) > 0 && string(im.Item) != "null" {
					item = im.Item
				}
				if err := eng.Set(im.Table, im.Key, item); err != nil {
					return records, fmt.Errorf("the journal %s, record %d: %w", p, n+1, err)
				}
			}
			records++
			e.grown.add(1, int64(recordHeader+len(pl)))
		}
	}
	return records, nil
}

// keepTornTail writes the bytes of the journal file path (read as b) past
// its whole records (good) to a new file beside it, then cuts the file to
// its whole records, so that the next file starts after whole records
// only. It returns the new file's name.
func keepTornTail(path string, b []byte, good int64) (kept string, err error) {
	k, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".torn-*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("keeping the torn end of the journal %s: %w", path, err)
	}
	_, err = k.Write(b[good:])
	if err == nil {
		err = k.Sync()
	}
	if cerr := k.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Truncate(path, good)
	}
	if err == nil {
		err = syncFile(path)
	}
	if err == nil {
		err = SyncDir(filepath.Dir(path))
	}
	if err != nil {
		return "", fmt.Errorf("keeping the torn end of the journal %s: %w", path, err)
	}
	return k.Name(), nil
}

// syncFile flushes the file at path to disk.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// apply sets one item to its image.
func (e *Store) apply(im image) error {
	if im.Item != nil {
		_, err := e.call("PutItem", map[string]any{"TableName": im.Table, "Item": im.Item})
		return err
	}
	_, err := e.call("DeleteItem", map[string]any{"TableName": im.Table, "Key": im.Key})
	return err
}
