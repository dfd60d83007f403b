package dynamo

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// tableUpdater is the UpdateTable call, which *dynamodb.Client has: a
// store whose client lacks it cannot add an index to an existing table.
type tableUpdater interface {
	UpdateTable(context.Context, *dynamodb.UpdateTableInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error)
}

// IndexPoll is how often ensureIndexes asks whether an index it created
// is ACTIVE.
var IndexPoll = 2 * time.Second

// ensureIndexes creates the global secondary indexes of keys.go's indexes
// that the existing table lacks, one at a time (DynamoDB creates one per
// UpdateTable call), each waited for until it is ACTIVE: DynamoDB fills a
// new index from the items that carry its key attributes, which takes
// minutes on a large table; items without them get them from a backfill
// (backfill.go), which EnsureTable runs next. It returns the indexes it
// created.
func (s *Store) ensureIndexes(ctx context.Context) ([]string, error) {
	var made []string
	out, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
	if err != nil {
		return made, wrap(err, "describing the table")
	}
	for _, k := range indexes {
		if hasIndex(out.Table, k.index) {
			continue
		}
		up, ok := s.db.(tableUpdater)
		if !ok {
			return made, errors.New("dynamo: the table has no index " + k.index + " and this client cannot create one (UpdateTable)")
		}
		s.Log.Info("creating a global secondary index on the existing table; the start waits until it is ACTIVE", "index", k.index)
		_, err := up.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &s.table,
			AttributeDefinitions: attributeDefinitions(k),
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName: aws.String(k.index), KeySchema: keySchemaOf(k),
				Projection: projectionOf(k)}}}})
		if err != nil {
			return made, wrap(err, "creating the index "+k.index)
		}
		if err := s.waitActive(ctx); err != nil {
			return made, err
		}
		made = append(made, k.index)
		s.Log.Info("the global secondary index is ACTIVE", "index", k.index)
	}
	return made, nil
}

// waitActive waits until the table and each of its indexes is ACTIVE (and
// done backfilling).
func (s *Store) waitActive(ctx context.Context) error {
	for {
		out, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
		if err != nil {
			return wrap(err, "describing the table")
		}
		if tableActive(out.Table) {
			return nil
		}
		select {
		case <-ctx.Done():
			return wrap(ctx.Err(), "waiting for the table's indexes")
		case <-time.After(IndexPoll):
		}
	}
}

func hasIndex(t *types.TableDescription, name string) bool {
	if t == nil {
		return false
	}
	for _, g := range t.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == name {
			return true
		}
	}
	return false
}

// Pending returns the indexes of keys.go's indexes the table lacks and
// the backfills it has not had: what the migrate command would do. A
// server that may not change the table (-create-table=false) asks it at
// start and says what is missing.
func (s *Store) Pending(ctx context.Context) (missing, backfilling []string, err error) {
	out, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
	if err != nil {
		return nil, nil, wrap(err, "describing the table")
	}
	for _, k := range indexes {
		if !hasIndex(out.Table, k.index) {
			missing = append(missing, k.index)
		}
	}
	for _, b := range backfills {
		m, err := s.getOne(ctx, backfillKey(b.name))
		if err != nil {
			return missing, backfilling, err
		}
		if m == nil || !boolOf(m, "done") {
			backfilling = append(backfilling, b.name)
		} else {
			s.backfilled.Store(b.name, true)
		}
	}
	return missing, backfilling, nil
}
