package dynamo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
)

// A process killed (SIGKILL) at any step of a snapshot, while writers go
// on, loses no write it answered: the table read, the journal's flush,
// its new file, the switch to it, the snapshot's temporary file made,
// written, flushed, renamed over the last one, the directory flushed, an
// older journal file removed. Each subtest runs TestSnapshotCrashChild in
// a process of its own, which kills itself at that step (hooked by
// embedded.Store.OnSnapshotStep), then starts a store on what it left.
func TestACrashAtEachStepOfASnapshotLosesNoAnsweredWrite(t *testing.T) {
	for _, step := range embedded.SnapshotSteps {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestSnapshotCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "SNAPSHOT_CRASH_DIR="+dir, "SNAPSHOT_CRASH_STEP="+step)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL ||
				!strings.Contains(string(out), "crash at "+step+"\n") {
				t.Fatalf("the child was not killed at %q: %v\n%s%s", step, err, out, stderr.String())
			}
			answered := map[string]string{}
			for _, l := range strings.Split(string(out), "\n") {
				if k, v, ok := strings.Cut(strings.TrimPrefix(l, "ok "), " "); ok && strings.HasPrefix(l, "ok ") {
					answered[k] = v
				}
			}
			if len(answered) < crashArmAfter {
				t.Fatalf("the child answered %d writes before the crash, want at least %d", len(answered), crashArmAfter)
			}
			f, s, _, log := journaledFile(t, filepath.Join(dir, "task-manager.jsonl"))
			if _, _, err := f.Load(context.Background()); err != nil {
				t.Fatalf("starting after a crash at %q: %v\n%s", step, err, log)
			}
			var dump bytes.Buffer
			if _, err := s.Export(context.Background(), &dump); err != nil {
				t.Fatal(err)
			}
			its, err := ReadDump(&dump)
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]string{}
			for _, it := range its {
				if pk := str(it, "PK"); strings.HasPrefix(pk, "CRASH#") {
					have[pk+"/"+str(it, "SK")] = str(it, "v")
				}
			}
			t.Logf("%d writes answered before the crash, all in the restarted store (%d journal records replayed)", len(answered), f.Replayed)
			for k, v := range answered {
				if have[k] != v {
					t.Fatalf("after a crash at %q, answered write %s=%s is %q in the restarted store (%d of %d answered writes there)",
						step, k, v, have[k], len(have), len(answered))
				}
			}
		})
	}
}

// crashArmAfter is how many writes the child answers before the crash may
// come.
const crashArmAfter = 40

// TestSnapshotCrashChild is the process TestACrashAtEachStepOfASnapshot…
// kills: writers on a journaled store print each answered write ("ok key
// value"), and snapshots are taken until one reaches the step, where the
// process says so and kills itself.
func TestSnapshotCrashChild(t *testing.T) {
	dir, step := os.Getenv("SNAPSHOT_CRASH_DIR"), os.Getenv("SNAPSHOT_CRASH_STEP")
	if dir == "" {
		t.Skip("a child of TestACrashAtEachStepOfASnapshotLosesNoAnsweredWrite")
	}
	ctx := context.Background()
	f, _, emb, _ := journaledFile(t, filepath.Join(dir, "task-manager.jsonl"))
	if _, _, err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	var printMu sync.Mutex
	say := func(format string, a ...any) {
		printMu.Lock()
		defer printMu.Unlock()
		fmt.Fprintf(os.Stdout, format, a...) // unbuffered: written before the next answer
	}
	emb.OnSnapshotStep(func(s string) {
		if s == step && armed.Load() {
			say("crash at %s\n", s)
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal lands
		}
	})
	var total atomic.Int64
	db := emb.Client()
	for w := range 4 {
		go func() {
			for n := 1; ; n++ {
				pk, sk := fmt.Sprintf("CRASH#%d", w), fmt.Sprintf("%06d", n)
				_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("task-manager"), Item: map[string]types.AttributeValue{
					"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk},
					"v": &types.AttributeValueMemberS{Value: fmt.Sprint("v", n)}}})
				if err != nil {
					say("failed %v\n", err)
					return
				}
				say("ok %s/%s v%d\n", pk, sk, n)
				total.Add(1)
			}
		}()
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		if total.Load() >= crashArmAfter/2 && !armed.Load() {
			if _, err := f.Save(ctx); err != nil { // a first snapshot: the next one replaces it and drops a journal file
				t.Fatal(err)
			}
		}
		if total.Load() >= crashArmAfter {
			armed.Store(true)
			if _, err := f.Save(ctx); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no snapshot reached %q in 60 s", step)
}
