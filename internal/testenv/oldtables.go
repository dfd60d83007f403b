package testenv

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo"
)

// MustUntitleTagEntries makes the Env's table as a version before tag
// index entries carried titles left it: each entry its task's due date and
// assignee alone, and no marker of the backfill that gives them their
// titles (dynamo.TagTitlesBackfill), which Store.RunBackfills then runs. It
// returns how many entries lost their title.
func (e *Env) MustUntitleTagEntries(tb testing.TB) int {
	tb.Helper()
	ctx := context.Background()
	n := 0
	p := dynamodb.NewScanPaginator(e.Client, &dynamodb.ScanInput{TableName: aws.String(e.Store.Table())})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			tb.Fatalf("scanning: %v", err)
		}
		for _, it := range out.Items {
			m, ok := it["tasks"].(*types.AttributeValueMemberM)
			if plain(it["type"]) != "TAGS" || !ok {
				continue
			}
			for tu, v := range m.Value {
				s, _ := plain(v).(string)
				if parts := strings.SplitN(s, "|", 3); len(parts) == 3 {
					m.Value[tu] = &types.AttributeValueMemberS{Value: parts[0] + "|" + parts[1]}
					n++
				}
			}
			if _, err := e.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.Store.Table()), Item: it}); err != nil {
				tb.Fatalf("writing a tag index: %v", err)
			}
		}
	}
	pk, sk := dynamo.BackfillMarkerKey(dynamo.TagTitlesBackfill)
	if _, err := e.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(e.Store.Table()), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}}); err != nil {
		tb.Fatalf("deleting the backfill's marker: %v", err)
	}
	return n
}
