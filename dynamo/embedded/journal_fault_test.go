package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// syncLog is a log the store and the test may use at once.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *syncLog) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// tableOf returns every item of table t, sorted, as JSON lines.
func tableOf(t *testing.T, e *Store) string {
	t.Helper()
	out, err := e.call("Scan", map[string]any{"TableName": "t"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Items []map[string]any }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, it := range got.Items {
		b, _ := json.Marshal(it)
		lines = append(lines, string(b))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// replayed returns table t as a new store replays prefix's journal.
func replayed(t *testing.T, prefix string) string {
	t.Helper()
	e := mustTableStore(t)
	if _, err := e.Replay(prefix, func(path, kept string, err error) { t.Errorf("the journal has a torn tail: %s: %v", path, err) }); err != nil {
		t.Fatal(err)
	}
	return tableOf(t, e)
}

// mustBeRefused fails the test unless err is the store's answer to a
// write it could not keep: CodeReadOnly, HTTP 507.
func mustBeRefused(t *testing.T, err error) {
	t.Helper()
	var ae smithy.APIError
	var re *awshttp.ResponseError
	if !errors.As(err, &ae) || ae.ErrorCode() != CodeReadOnly || !errors.As(err, &re) || re.HTTPStatusCode() != 507 {
		t.Fatalf("the write answered %v; want %s, HTTP 507", err, CodeReadOnly)
	}
}

// waitWritable waits for the store's probes to find its journal writable
// again (they try every second).
func waitWritable(t *testing.T, e *Store) {
	t.Helper()
	if !writableWithin(e, 60*time.Second) {
		t.Fatal("the store is still read-only 60 s after its journal could be written again")
	}
}

// writableWithin reports whether the store takes writes within d.
func writableWithin(e *Store, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ro, _, _ := e.ReadOnly(); !ro {
			return true
		}
	}
	return false
}

var errNoSpace = fmt.Errorf("injected: %w", syscall.ENOSPC)

// A write whose record the journal cannot write (a full disk: half the
// record written, then ENOSPC) or, with sync, flush (a failing disk) is
// not applied and is answered CodeReadOnly, once: the SDK does not retry
// it. The store is then read-only, said once in its log: every write is
// refused at once, reads go on. Once the journal can be written again the
// probes find it, say so, and writes are kept again; the journal replayed
// is the table as answered.
func TestAWriteTheJournalCannotKeepIsNotApplied(t *testing.T) {
	ctx := context.Background()
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}}
	}
	item := func(pk, v string) map[string]types.AttributeValue {
		it := key(pk)
		it["v"] = &types.AttributeValueMemberS{Value: v}
		return it
	}
	table := aws.String("t")
	writes := map[string]func(db *dynamodb.Client, v string) error{
		"PutItem": func(db *dynamodb.Client, v string) error {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item("a", v)})
			return err
		},
		"UpdateItem": func(db *dynamodb.Client, v string) error {
			_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key("a"), UpdateExpression: aws.String("SET v = :v"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: v}}})
			return err
		},
		"DeleteItem": func(db *dynamodb.Client, v string) error {
			_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: table, Key: key("b")})
			return err
		},
		"BatchWriteItem": func(db *dynamodb.Client, v string) error {
			_, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t": {
				{PutRequest: &types.PutRequest{Item: item("a", v)}},
				{PutRequest: &types.PutRequest{Item: item("new"+v, v)}},
				{DeleteRequest: &types.DeleteRequest{Key: key("b")}},
			}}})
			return err
		},
		"TransactWriteItems": func(db *dynamodb.Client, v string) error {
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: table, Item: item("new"+v, v)}},
				{Delete: &types.Delete{TableName: table, Key: key("b")}},
				{Update: &types.Update{TableName: table, Key: key("a"), UpdateExpression: aws.String("SET v = :v"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: v}}}},
			}})
			return err
		},
	}
	for _, fault := range []string{"write", "sync"} {
		for _, op := range slices.Sorted(func(yield func(string) bool) {
			for k := range writes {
				if !yield(k) {
					return
				}
			}
		}) {
			t.Run(fault+" fails/"+op, func(t *testing.T) {
				var log syncLog
				e, prefix := mustJournaledStore(t, true, log.logger())
				db := e.Client() // the SDK's default retryer: 3 attempts
				write := writes[op]
				if err := writes["PutItem"](db, "1"); err != nil {
					t.Fatal(err)
				}
				if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item("b", "b")}); err != nil {
					t.Fatal(err)
				}
				before, writesBefore := tableOf(t, e), e.Writes()

				e.InjectJournalFault(func(f string) error {
					if f == fault {
						return errNoSpace
					}
					return nil
				})
				mustBeRefused(t, write(db, "2"))
				if got := tableOf(t, e); got != before {
					t.Fatalf("the refused write was applied:\n%s\nwant\n%s", got, before)
				}
				if ro, why, refused := e.ReadOnly(); !ro || !errors.Is(why, syscall.ENOSPC) || refused != 1 {
					t.Fatalf("ReadOnly = %v, %v, %d refused; want read-only for ENOSPC, 1 refused (the SDK did not retry)", ro, why, refused)
				}
				// While read-only every write is refused at once: none reaches the
				// table, even once the disk has room, until a probe finds it.
				e.InjectJournalFault(nil)
				for i := range 3 {
					mustBeRefused(t, write(db, fmt.Sprint(3+i)))
				}
				if got := tableOf(t, e); got != before || e.Writes() != writesBefore {
					t.Fatalf("a write refused while read-only was applied or counted:\n%s", got)
				}
				if _, _, refused := e.ReadOnly(); refused != 4 {
					t.Fatalf("%d writes refused; want 4", refused)
				}

				waitWritable(t, e)
				if err := write(db, "9"); err != nil {
					t.Fatalf("a write once the journal can be written again: %v", err)
				}
				if got := tableOf(t, e); got == before {
					t.Fatalf("the write after the recovery is not in the table:\n%s", got)
				}
				if got, want := replayed(t, prefix), tableOf(t, e); got != want {
					t.Fatalf("the journal replayed differs from the table as answered:\n%s\nwant\n%s", got, want)
				}
				logs := log.String()
				if n := strings.Count(logs, "level=ERROR"); n != 1 || !strings.Contains(logs, "is read-only") {
					t.Fatalf("%d ERROR lines for one read-only spell of 4 refused writes; want 1 saying read-only:\n%s", n, logs)
				}
				if !strings.Contains(logs, "takes writes again") || !strings.Contains(logs, "refused=4") {
					t.Fatalf("the recovery was not logged with the refused writes:\n%s", logs)
				}
			})
		}
	}
}

// Concurrent writers whose group flush fails: every write whose record was
// in it is put back (the newest first) and refused, whatever wrote after
// it, so the table holds exactly the writes answered OK, and the journal
// replayed is that table.
func TestAFailedGroupFlushPutsBackEveryWriteInIt(t *testing.T) {
	ctx := context.Background()
	e, prefix := mustJournaledStore(t, true, slog.New(slog.DiscardHandler))
	var flushes atomic.Int64
	e.InjectJournalFault(func(op string) error {
		if op != "sync" {
			return nil
		}
		time.Sleep(2 * time.Millisecond) // a slow disk: writers pile up behind a flush
		if n := flushes.Add(1); n%4 == 0 && n <= 12 {
			return syscall.EIO
		}
		return nil
	})
	db := e.Client()
	var ok atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("t"),
					Key:              map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: fmt.Sprint("c", i%5)}},
					UpdateExpression: aws.String("SET w = :w ADD n :one"),
					ExpressionAttributeValues: map[string]types.AttributeValue{
						":w": &types.AttributeValueMemberN{Value: fmt.Sprint(w)}, ":one": &types.AttributeValueMemberN{Value: "1"}}})
				if err == nil {
					ok.Add(1)
					continue
				}
				var ae smithy.APIError
				if !errors.As(err, &ae) || ae.ErrorCode() != CodeReadOnly {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				if !writableWithin(e, 60*time.Second) {
					t.Errorf("writer %d: the store stays read-only", w)
					return
				}
			}
		}()
	}
	wg.Wait()
	e.InjectJournalFault(nil)
	table := tableOf(t, e)
	sum := 0
	for _, l := range strings.Split(table, "\n") {
		var n int
		if i := strings.Index(l, `"n":{"N":"`); i >= 0 {
			_, _ = fmt.Sscanf(l[i+len(`"n":{"N":"`):], "%d", &n)
		}
		sum += n
	}
	t.Logf("%d of 320 writes answered OK, %d flushes", ok.Load(), flushes.Load())
	if int64(sum) != ok.Load() || ok.Load() == 0 || ok.Load() == 320 || flushes.Load() < 12 {
		t.Fatalf("the counters add up to %d, %d writes were answered OK (of 320); want equal, some refused", sum, ok.Load())
	}
	if got := replayed(t, prefix); got != table {
		t.Fatalf("the journal replayed differs from the table as answered:\n%s\nwant\n%s", got, table)
	}
}

// A journal switch that cannot make its new file (another process made it,
// or the disk refuses) leaves the old file in use: writes go on being
// journaled and answered, and the journal replayed holds them all.
func TestAFailedCutKeepsTheOldJournal(t *testing.T) {
	ctx := context.Background()
	for name, block := range map[string]func(e *Store, prefix string) (unblock func()){
		"the next file exists": func(e *Store, prefix string) func() {
			_, seqs, _ := JournalFiles(prefix)
			next := journalPath(prefix, seqs[len(seqs)-1]+1)
			mustWriteFile(t, next, nil)
			return func() { _ = os.Remove(next) }
		},
		"the disk refuses a new file": func(e *Store, prefix string) func() {
			e.InjectJournalFault(func(op string) error {
				if op == "open" {
					return syscall.ENOSPC
				}
				return nil
			})
			return func() { e.InjectJournalFault(nil) }
		},
	} {
		t.Run(name, func(t *testing.T) {
			e, prefix := mustJournaledStore(t, true, nil)
			db := e.Client()
			put := func(v string) {
				t.Helper()
				if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{
					"PK": &types.AttributeValueMemberS{Value: "k" + v}, "v": &types.AttributeValueMemberS{Value: v}}}); err != nil {
					t.Fatalf("write %s: %v", v, err)
				}
			}
			put("1")
			unblock := block(e, prefix)
			release := e.HoldWrites()
			_, err := e.CutJournal()
			release()
			if err == nil {
				t.Fatal("CutJournal succeeded")
			}
			put("2")
			put("3")
			unblock()
			if ro, why, _ := e.ReadOnly(); ro {
				t.Fatalf("a failed cut made the store read-only: %v", why)
			}
			if got, want := replayed(t, prefix), tableOf(t, e); got != want || !strings.Contains(got, `"3"`) {
				t.Fatalf("after a failed cut the journal replayed is\n%s\nwant\n%s", got, want)
			}
			release = e.HoldWrites()
			drop, err := e.CutJournal()
			release()
			if err != nil {
				t.Fatalf("the cut once unblocked: %v", err)
			}
			put("4")
			if got, want := replayed(t, prefix), tableOf(t, e); got != want {
				t.Fatalf("after the cut the journal replayed is\n%s\nwant\n%s", got, want)
			}
			if err := drop(); err != nil {
				t.Fatal(err)
			}
			if _, seqs, _ := JournalFiles(prefix); len(seqs) != 1 {
				t.Fatalf("journal files %v after the drop; want the new one only", seqs)
			}
		})
	}
}
