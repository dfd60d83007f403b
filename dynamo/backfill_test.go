package dynamo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
)

// migrationBackends are the stores an index is added on: the embedded
// store, and DynamoDB Local when scripts/test started it (CI always);
// their clients take opts (a call counter) too.
func migrationBackends(t *testing.T, opts ...func(*dynamodb.Options)) map[string]*dynamodb.Client {
	t.Helper()
	testEmbOnce.Do(func() { testEmb, testEmbErr = embedded.Start() })
	if testEmbErr != nil {
		t.Fatal(testEmbErr)
	}
	out := map[string]*dynamodb.Client{"embedded": testEmb.Client(client.Options(opts...)...)}
	switch ep := os.Getenv("DYNAMODB_LOCAL_ENDPOINT"); {
	case ep != "":
		out["dynamodb-local"] = dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep),
			Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, client.Options(opts...)...)
	case os.Getenv("CI") != "":
		t.Fatal("DYNAMODB_LOCAL_ENDPOINT is not set in CI; scripts/test starts DynamoDB Local and sets it")
	}
	return out
}

// widgetBackfill gives WIDGET items GSI2 keys made of their color.
var widgetBackfill = backfill{name: "test-widgets", types: []string{"WIDGET"}, reads: []string{"color"},
	set: func(it item) item {
		return item{attrGSI2PK: &types.AttributeValueMemberS{Value: "COLOR#" + str(it, "color")}, attrGSI2SK: it[attrPK]}
	}}

// TestAnIndexIsAddedToATableThatHoldsData is the path of a version that
// adds an index: a table made without GSI2 (as a version before it made
// it) holding items, some with the new index's keys, most without;
// EnsureTable creates the index (UpdateTable), waits until it is ACTIVE,
// then backfills the others' keys, paced, and a stopped backfill resumes
// where it stopped, writing no item twice.
func TestAnIndexIsAddedToATableThatHoldsData(t *testing.T) {
	for name, db := range migrationBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := New(db, fmt.Sprintf("migrate-%d-%d", time.Now().UnixNano(), testTableN.Add(1)))
			s.Log = slog.New(slog.DiscardHandler)
			old := TableDefinition(s.Table())
			old.GlobalSecondaryIndexes = old.GlobalSecondaryIndexes[:1]
			old.AttributeDefinitions = old.AttributeDefinitions[:4]
			if _, err := db.CreateTable(ctx, old); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.Table())})
			})
			const widgets, preIndexed = 230, 7
			for i := range widgets + preIndexed {
				it := key{"W#" + fmt.Sprintf("%04d", i), "W"}.av()
				it["type"] = &types.AttributeValueMemberS{Value: "WIDGET"}
				it["color"] = &types.AttributeValueMemberS{Value: []string{"red", "blue"}[i%2]}
				if i >= widgets { // written by the new version already
					for a, v := range widgetBackfill.set(it) {
						it[a] = v
					}
				}
				if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.Table()), Item: it}); err != nil {
					t.Fatal(err)
				}
			}
			defer func(saved []backfill, poll time.Duration) { backfills, IndexPoll = saved, poll }(backfills, IndexPoll)
			backfills, IndexPoll = []backfill{widgetBackfill}, 10*time.Millisecond

			// A clock that the pacer's waits move: a backfill stopped after
			// 150 writes (its second page), at 50 writes a second.
			clock := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
			s.Now = func() time.Time { return clock }
			s.BackfillRate = 50
			var waited time.Duration
			stop := errors.New("stopped")
			writes := 0
			s.Sleep = func(_ context.Context, d time.Duration) error {
				if writes++; writes == 150 {
					return stop
				}
				waited += d
				clock = clock.Add(d)
				return nil
			}
			if _, err := s.EnsureTable(ctx); !errors.Is(err, stop) {
				t.Fatalf("EnsureTable with the backfill stopped: %v, want the stop", err)
			}
			out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.Table())})
			if err != nil {
				t.Fatal(err)
			}
			if !hasIndex(out.Table, indexGSI2) || !tableActive(out.Table) {
				t.Fatalf("GSI2 after EnsureTable: %+v", out.Table.GlobalSecondaryIndexes)
			}
			m, err := s.getOne(ctx, backfillKey(widgetBackfill.name))
			if err != nil || m == nil || boolOf(m, "done") || str(m, "nextPK") == "" {
				t.Fatalf("the stopped backfill's marker: %v %v, want its place kept", m, err)
			}
			if got, _ := strconv.Atoi(numOf(m, "written")); got < 90 || got >= 150 {
				t.Errorf("the marker counts %d writes at its last page, want its first page's (at most 100)", got)
			}
			// The second start resumes: the rest of the items, none twice.
			if _, err := s.EnsureTable(ctx); err != nil {
				t.Fatal(err)
			}
			if m, _ = s.getOne(ctx, backfillKey(widgetBackfill.name)); !boolOf(m, "done") {
				t.Errorf("the marker after the second start: %v, want done", m)
			}
			// Each write 1/50 s after the one before, but each start's
			// first: 149 writes in the first start (the 150th's wait
			// refused), 81 in the second; 230 in all, so none twice.
			if want := time.Duration(widgets-2) * (time.Second / 50); waited != want {
				t.Errorf("the backfill waited %v in all, want %v (%d writes at 50/s)", waited, want, widgets)
			}
			for _, color := range []string{"red", "blue"} {
				n := 0
				p := dynamodb.NewQueryPaginator(db, &dynamodb.QueryInput{TableName: aws.String(s.Table()), IndexName: aws.String(indexGSI2),
					KeyConditionExpression:    aws.String("GSI2PK = :p"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "COLOR#" + color}}})
				for p.HasMorePages() {
					page, err := p.NextPage(ctx)
					if err != nil {
						t.Fatal(err)
					}
					n += len(page.Items)
				}
				if want := map[string]int{"red": 119, "blue": 118}[color]; n != want {
					t.Errorf("GSI2 lists %d %s widgets, want %d", n, color, want)
				}
			}
			// A third start finds the index and the marker: no write.
			s.Sleep = func(context.Context, time.Duration) error { t.Error("a write after the backfill was done"); return nil }
			if _, err := s.EnsureTable(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestTheEmbeddedStoresDataGetsTheBackfillsItHasNotHad: a data file (or a
// dump) written before a backfill is loaded into a table made afresh,
// whose own markers say every backfill is done: its items get the
// attributes at the start (DataFile.Load) or in the import (recount), and
// a snapshot taken after says so, so the next start writes nothing.
func TestTheEmbeddedStoresDataGetsTheBackfillsItHasNotHad(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/task-manager.jsonl"
	old, oldEmb := persistStore(t)
	f0 := &DataFile{Path: path, Store: old, Embedded: oldEmb}
	if _, _, err := f0.Load(ctx); err != nil {
		t.Fatal(err)
	}
	var widgets []string
	for i := range 3 {
		it := key{fmt.Sprintf("W#%d", i), "W"}.av()
		it["type"] = &types.AttributeValueMemberS{Value: "WIDGET"}
		it["color"] = &types.AttributeValueMemberS{Value: "red"}
		if _, err := old.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(old.Table()), Item: it}); err != nil {
			t.Fatal(err)
		}
		widgets = append(widgets, fmt.Sprintf("W#%d", i))
	}
	var dump strings.Builder
	if _, err := old.Export(ctx, &dump); err != nil {
		t.Fatal(err)
	}
	if _, err := f0.Save(ctx); err != nil {
		t.Fatal(err)
	}
	defer func(saved []backfill) { backfills = saved }(backfills)
	backfills = []backfill{widgetBackfill}
	red := func(s *Store) int {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(s.Table()), IndexName: aws.String(indexGSI2),
			KeyConditionExpression:    aws.String("GSI2PK = :p"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "COLOR#red"}}})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Items)
	}
	for _, via := range []string{"data file", "snapshot of the first start", "import"} {
		s, emb := persistStore(t)
		writes := 0
		s.Now = func() time.Time { return storeTestNow } // a frozen clock: each write after the first waits
		s.Sleep = func(context.Context, time.Duration) error { writes++; return nil }
		s.BackfillRate = 1_000_000_000 // every write waits its nanosecond, counted
		if via == "import" {
			items, err := ReadDump(strings.NewReader(dump.String()))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.PutItems(ctx, items); err != nil {
				t.Fatal(err)
			}
		} else {
			f := &DataFile{Path: path, Store: s, Embedded: emb}
			if _, _, err := f.Load(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Save(ctx); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string]int{"data file": 2, "snapshot of the first start": 0, "import": 0}[via] // the first write waits none
		if got := red(s); got != len(widgets) || writes != want {
			t.Errorf("%s: GSI2 lists %d of the %d widgets after %d paced writes, want all after %d", via, got, len(widgets), writes, want)
		}
		if m, _ := s.getOne(ctx, backfillKey(widgetBackfill.name)); !boolOf(m, "done") {
			t.Errorf("%s: the backfill's marker %v, want done", via, m)
		}
	}
}
