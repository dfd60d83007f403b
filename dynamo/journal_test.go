package dynamo

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
)

// journalWrites makes one write of every kind on the table through the
// SDK, and returns the table as exported before each write and after the
// last (states[i]: before write i; states[len-1]: after all).
func journalWrites(t *testing.T, s *Store, emb *embedded.Store) (states []string) {
	t.Helper()
	ctx := context.Background()
	db := emb.Client()
	table := aws.String("task-manager")
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "X"}}
	}
	item := func(pk, v string) map[string]types.AttributeValue {
		it := key(pk)
		it["v"] = &types.AttributeValueMemberS{Value: v}
		return it
	}
	writes := []func() error{
		func() error {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item("J#put", "1")})
			return err
		},
		func() error {
			_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key("J#put"),
				UpdateExpression: aws.String("SET v = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: "2"}}})
			return err
		},
		func() error {
			_, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"task-manager": {
				{PutRequest: &types.PutRequest{Item: item("J#batch1", "b")}},
				{PutRequest: &types.PutRequest{Item: item("J#batch2", "b")}},
			}}})
			return err
		},
		func() error {
			_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: table, Key: key("J#batch1")})
			return err
		},
		func() error { // a cancelled transaction changes nothing and is not journaled
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: table, Item: item("J#never", "x")}},
				{ConditionCheck: &types.ConditionCheck{TableName: table, Key: key("J#missing"), ConditionExpression: aws.String("attribute_exists(PK)")}},
			}})
			if err == nil {
				t.Error("the conditioned transaction succeeded")
			}
			return nil
		},
		func() error {
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: table, Item: item("J#txn", "t")}},
				{Delete: &types.Delete{TableName: table, Key: key("J#batch2")}},
				{Update: &types.Update{TableName: table, Key: key("J#put"), UpdateExpression: aws.String("SET v = :v"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: "3"}}}},
			}})
			return err
		},
	}
	for i, w := range writes {
		states = append(states, exportString(t, s))
		if err := w(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	return append(states, exportString(t, s))
}

// journaledFile opens a data file with a journal on a new embedded store,
// its warnings logged to the returned buffer.
func journaledFile(t *testing.T, path string) (*DataFile, *Store, *embedded.Store, *bytes.Buffer) {
	t.Helper()
	s, emb := persistStore(t)
	var log bytes.Buffer
	s.Log = slog.New(slog.NewTextHandler(&log, nil))
	return &DataFile{Path: path, Store: s, Embedded: emb, Journal: JournalPrefix(path), JournalSync: true}, s, emb, &log
}

// A process that ends without saving (a crash) loses none of the writes its
// store answered: every write call (PutItem, UpdateItem, DeleteItem,
// BatchWriteItem, TransactWriteItems) is in the journal, which the next
// Load replays over the last snapshot. A torn last record is dropped with a
// warning and everything before it kept.
func TestTheJournalKeepsEveryAnsweredWrite(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		tear func(t *testing.T, file string) // damages the newest journal file
		torn bool                            // the last record is lost
		warn bool
	}{
		{name: "a crash after the last answer"},
		{name: "the last record cut in the middle", torn: true, warn: true, tear: func(t *testing.T, file string) {
			info, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			// The last record (the transaction) is the file's last line of
			// JSON: cut it 20 bytes before its end.
			if err := os.Truncate(file, info.Size()-20); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "garbage after the last record", warn: true, tear: func(t *testing.T, file string) {
			f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write([]byte{200, 0, 0, 0, 1, 2, 3, 4, '{', '"'}); err != nil { // a header claiming 200 bytes, and 2
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "task-manager.jsonl")
			f, s, emb, _ := journaledFile(t, path)
			if _, _, err := f.Load(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.Import(ctx, s.Demo(storeTestNow)); err != nil {
				t.Fatal(err)
			}
			if saved, err := f.Save(ctx); err != nil || !saved {
				t.Fatalf("Save = %v, %v", saved, err)
			}
			states := journalWrites(t, s, emb)
			// The crash: no save. What is on disk is the snapshot and the journal.
			files, _, err := embedded.JournalFiles(f.Journal)
			if err != nil || len(files) != 1 {
				t.Fatalf("journal files %v, %v; want the one started by the save", files, err)
			}
			if tc.tear != nil {
				tc.tear(t, files[0])
			}

			f2, s2, _, log := journaledFile(t, path)
			n, found, err := f2.Load(ctx)
			if err != nil || !found {
				t.Fatalf("Load after the crash = %d, %v, %v", n, found, err)
			}
			want := states[len(states)-1]
			if tc.torn {
				want = states[len(states)-2] // before the last write
			}
			if got := exportString(t, s2); got != want {
				t.Fatalf("the table after the restart differs from the table as answered:\ngot  %s\nwant %s", got, want)
			}
			if strings.Contains(log.String(), "torn record") != tc.warn {
				t.Fatalf("warning logged: %v, want %v:\n%s", !tc.warn, tc.warn, log)
			}
			if f2.Replayed != 5-map[bool]int{true: 1}[tc.torn] { // six writes, one cancelled
				t.Errorf("Replayed = %d records", f2.Replayed)
			}

			// The next snapshot holds it all, and the old journal files go.
			if saved, err := f2.Save(ctx); err != nil || !saved {
				t.Fatalf("Save after the replay = %v, %v; want a snapshot of the replayed writes", saved, err)
			}
			if files, _, _ := embedded.JournalFiles(f.Journal); len(files) != 1 {
				t.Fatalf("journal files after the snapshot: %v; want only the new one", files)
			}
			f3, s3, _, _ := journaledFile(t, path)
			if _, _, err := f3.Load(ctx); err != nil {
				t.Fatal(err)
			}
			if got := exportString(t, s3); got != want {
				t.Fatal("the table after a second restart differs")
			}
			if f3.Replayed != 0 {
				t.Errorf("the second restart replayed %d records; the snapshot had them all", f3.Replayed)
			}
		})
	}
}

// Without any snapshot yet (a crash within the first seconds of a new
// store), the journal alone is the table, and Load reports it found.
func TestTheJournalAloneIsTheTable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "task-manager.jsonl")
	f, s, _, _ := journaledFile(t, path)
	if _, found, err := f.Load(ctx); err != nil || found {
		t.Fatalf("Load of a new directory = %v, %v", found, err)
	}
	if err := s.Import(ctx, s.Demo(storeTestNow)); err != nil {
		t.Fatal(err)
	}
	want := exportString(t, s)
	f2, s2, _, _ := journaledFile(t, path)
	n, found, err := f2.Load(ctx)
	if err != nil || !found || n != len(sortedLinesOf(want))-1 {
		t.Fatalf("Load = %d, %v, %v; want the demo's %d items, found", n, found, err, len(sortedLinesOf(want))-1)
	}
	if got := exportString(t, s2); got != want {
		t.Fatal("the table replayed from the journal alone differs")
	}
}

// Concurrent writers to the same items: the records are in the order the
// writes took effect (writes share fsyncs, never their order), so the
// replay ends where the table did.
func TestTheJournalKeepsTheOrderOfConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "task-manager.jsonl")
	f, s, emb, _ := journaledFile(t, path)
	if _, _, err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	db := emb.Client()
	errs := make(chan error, 8)
	for w := range 8 {
		go func() {
			var err error
			for i := 0; i < 40 && err == nil; i++ {
				pk := "C#" + string(rune('a'+i%5)) // 5 items, every writer on each
				_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("task-manager"),
					Key:              map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "X"}},
					UpdateExpression: aws.String("SET w = :w ADD n :one"),
					ExpressionAttributeValues: map[string]types.AttributeValue{
						":w": &types.AttributeValueMemberN{Value: string(rune('0' + w))}, ":one": &types.AttributeValueMemberN{Value: "1"}}})
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	want := exportString(t, s)
	if !strings.Contains(want, `"n":{"N":"64"}`) {
		t.Fatalf("the counters are not 8×40/5 = 64 each: %s", want)
	}
	f2, s2, _, _ := journaledFile(t, path)
	if _, _, err := f2.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if got := exportString(t, s2); got != want {
		t.Fatalf("replayed:\n%s\nwant:\n%s", got, want)
	}
}

// Damage to the journal that is not a torn tail (a flipped bit in its
// first record, or in the middle) refuses the load with an error naming
// the file and the offset, and changes no file: dropping the records
// after it would lose answered writes without a word.
func TestADamagedJournalRefusesTheLoad(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		record int // the record whose payload gets a flipped bit
	}{{"a bit flipped in the first record", 0}, {"a bit flipped in the middle", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "task-manager.jsonl")
			f, s, emb, _ := journaledFile(t, path)
			if _, _, err := f.Load(ctx); err != nil {
				t.Fatal(err)
			}
			journalWrites(t, s, emb)
			files, _, err := embedded.JournalFiles(f.Journal)
			if err != nil || len(files) != 1 {
				t.Fatalf("journal files %v, %v", files, err)
			}
			b, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			payloads, _, err := embedded.ReadRecords(bytes.NewReader(b))
			if err != nil || len(payloads) != 5 {
				t.Fatalf("the journal holds %d records, %v; want 5", len(payloads), err)
			}
			off := 0
			for _, p := range payloads[:tc.record] {
				off += 8 + len(p)
			}
			b[off+8+len(payloads[tc.record])/2] ^= 0x10
			if err := os.WriteFile(files[0], b, 0o600); err != nil {
				t.Fatal(err)
			}

			f2, _, _, log := journaledFile(t, path)
			_, _, err = f2.Load(ctx)
			if err == nil || !strings.Contains(err.Error(), files[0]) || !strings.Contains(err.Error(), fmt.Sprintf("damaged record at offset %d", off)) {
				t.Fatalf("Load = %v; want an error naming %s and the offset %d", err, files[0], off)
			}
			if strings.Contains(log.String(), "torn") {
				t.Fatalf("the damage was taken for a torn tail:\n%s", log)
			}
			if after, _, _ := embedded.JournalFiles(f.Journal); !slices.Equal(after, files) {
				t.Fatalf("journal files after the refused load: %v; want %v unchanged", after, files)
			}
			if got, _ := os.ReadFile(files[0]); !bytes.Equal(got, b) {
				t.Fatal("the damaged journal file was changed")
			}
		})
	}
}

// Saves that keep failing are logged once as an error when they start (at
// debug level after that, and again every failureReminder), and the first
// save that works again says how many failed: not an error every 2 s.
func TestRunLogsAFailingSaveOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "sub") // a file where the snapshot's directory should be
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, emb := persistStore(t)
	var log syncBuffer
	s.Log = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := &DataFile{Path: filepath.Join(blocker, "task-manager.jsonl"), Store: s, Embedded: emb}
	if err := s.Import(ctx, s.Demo(storeTestNow)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { f.Run(ctx, 5*time.Millisecond); close(done) }()
	waitFor := func(what string, ok func(logs string) bool) string {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			if logs := log.String(); ok(logs) {
				return logs
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within a minute:\n%s", what, log.String())
			}
		}
	}
	logs := waitFor("five failed saves", func(l string) bool { return strings.Count(l, "failed again") >= 4 })
	if n := strings.Count(logs, "level=ERROR"); n != 1 {
		t.Fatalf("%d ERROR lines for five failed saves; want 1:\n%s", n, logs)
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(blocker, 0o700); err != nil {
		t.Fatal(err)
	}
	logs = waitFor("save that works again", func(l string) bool { return strings.Contains(l, "works again") })
	cancel()
	<-done
	if n := strings.Count(logs, "level=ERROR"); n != 1 || !regexp.MustCompile(`works again" failures=([5-9]|\d\d+)`).MatchString(logs) {
		t.Fatalf("%d ERROR lines; want 1, and the recovery saying how many saves failed:\n%s", n, logs)
	}
	if _, err := os.Stat(f.Path); err != nil {
		t.Fatalf("no snapshot once saving works again: %v", err)
	}
}

// syncBuffer is a buffer the store's log and the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
