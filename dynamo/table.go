package dynamo

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/dynamo/embedded"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TableDefinition returns the CreateTable input of the store's table: PK/SK
// and its global secondary indexes (keys.go's indexes): GSI1 (a project's
// tasks by due date, a user's projects, a tag's tasks per project), GSI2
// (a user's assigned tasks by due date, split into open and done) and GSI3
// (a project's comments, what a list shows of them).
func TableDefinition(name string) *dynamodb.CreateTableInput {
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: attributeDefinitions(onTable),
		KeySchema:            keySchemaOf(onTable),
	}
	for _, k := range indexes {
		for _, d := range attributeDefinitions(k) {
			if !slices.ContainsFunc(in.AttributeDefinitions, func(o types.AttributeDefinition) bool {
				return aws.ToString(o.AttributeName) == aws.ToString(d.AttributeName)
			}) {
				in.AttributeDefinitions = append(in.AttributeDefinitions, d)
			}
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, indexDefinition(k))
	}
	return in
}

func keySchemaOf(k keySchema) []types.KeySchemaElement {
	return []types.KeySchemaElement{
		{AttributeName: aws.String(k.pkAttr), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String(k.skAttr), KeyType: types.KeyTypeRange},
	}
}

func attributeDefinitions(k keySchema) []types.AttributeDefinition {
	s := types.ScalarAttributeTypeS
	return []types.AttributeDefinition{{AttributeName: aws.String(k.pkAttr), AttributeType: s},
		{AttributeName: aws.String(k.skAttr), AttributeType: s}}
}

func indexDefinition(k keySchema) types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{IndexName: aws.String(k.index), KeySchema: keySchemaOf(k), Projection: projectionOf(k)}
}

// projectionOf is an index's projection: ALL, or INCLUDE its include.
func projectionOf(k keySchema) *types.Projection {
	if k.include == "" {
		return &types.Projection{ProjectionType: types.ProjectionTypeAll}
	}
	return &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: strings.Fields(k.include)}
}

// EnsureTable creates the table with its indexes when it is missing, or
// the indexes an existing table lacks (ensureIndexes), and waits until it
// and its indexes are active; then it runs the backfills an existing table
// has not had (backfill.go) and reads (or, in a new
// table, writes) the marker of complete tag indexes (tagindex.go). It
// reports whether it created the table. Endpoints that report no status (the embedded store) count as
// active.
func (s *Store) EnsureTable(ctx context.Context) (created bool, err error) {
	_, err = s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
	var nf *types.ResourceNotFoundException
	switch {
	case err == nil:
	case errors.As(err, &nf):
		if _, err := s.db.CreateTable(ctx, TableDefinition(s.table)); err != nil {
			var inUse *types.ResourceInUseException
			if !errors.As(err, &inUse) {
				return false, wrap(err, "creating the table")
			}
		} else {
			created = true
		}
	default:
		return false, wrap(err, "describing the table")
	}
	if !created {
		if _, err := s.ensureIndexes(ctx); err != nil {
			return false, err
		}
	}
	for {
		out, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
		if err != nil {
			return created, wrap(err, "describing the table")
		}
		if tableActive(out.Table) {
			if created {
				s.enableTTL(ctx)
				if err := s.markChangeLog(ctx); err != nil {
					return created, err
				}
				if err := s.markCopies(ctx); err != nil {
					return created, err
				}
				if err := s.markCommentIndex(ctx); err != nil {
					return created, err
				}
				if err := s.markTagUnits(ctx); err != nil {
					return created, err
				}
				if err := s.markBackfills(ctx); err != nil {
					return created, err
				}
				return created, s.markTagIndexed(ctx)
			}
			if err := s.DetectChangeLog(ctx); err != nil {
				return created, err
			}
			if err := s.EnsureCopies(ctx); err != nil {
				return created, err
			}
			if err := s.EnsureCommentIndex(ctx); err != nil {
				return created, err
			}
			if err := s.EnsureTagUnits(ctx); err != nil {
				return created, err
			}
			if err := s.RunBackfills(ctx); err != nil {
				return created, err
			}
			return created, s.DetectTagIndex(ctx)
		}
		select {
		case <-ctx.Done():
			return created, wrap(ctx.Err(), "waiting for the table")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TTLAttribute is the table's time-to-live attribute: an idempotency
// record's expiry, or a change log item's (changes.go), in Unix seconds.
const TTLAttribute = "expiresAt"

// enableTTL lets DynamoDB delete expired idempotency records (attribute
// TTLAttribute); expired records are ignored when read either way. The embedded
// store has no TTL: its client does not ask (embedded.ErrNoTTL), and that is said in
// plain words at DEBUG. Another endpoint that refuses is a real problem
// (records pile up), so it is a warning with the cause.
func (s *Store) enableTTL(ctx context.Context) {
	_, err := s.db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: &s.table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(TTLAttribute), Enabled: aws.Bool(true)}})
	switch {
	case errors.Is(err, embedded.ErrNoTTL):
		s.Log.Debug("the embedded store has no time to live: expired idempotency records stay in memory (they are ignored when read)")
	case err != nil:
		s.Log.Warn("time to live could not be enabled; expired idempotency records stay (they are ignored when read)", "err", err)
	}
}

func tableActive(t *types.TableDescription) bool {
	if t == nil {
		return false
	}
	if t.TableStatus != "" && t.TableStatus != types.TableStatusActive {
		return false
	}
	for _, g := range t.GlobalSecondaryIndexes {
		if (g.IndexStatus != "" && g.IndexStatus != types.IndexStatusActive) || aws.ToBool(g.Backfilling) {
			return false
		}
	}
	return true
}
