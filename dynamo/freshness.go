package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// What an HTTP ETag stands on (graph/etag): the viewer's profile, the seqs
// of the projects an answer showed, and the profiles changed but not yet
// copied into their projects' change logs. Each is one call, read as the
// context says (a query's: eventually consistent, dynamo.Screen).

// MaxFreshnessProjects is how many projects one Freshness reads: one
// BatchGetItem with the profile.
const MaxFreshnessProjects = maxBatchGet - 1

// Freshness is what Freshness read: the viewer's profile (nil: none, or
// not asked for) and the projects, Read, in the order asked (nil: gone).
type Freshness struct {
	Profile *domain.User
	Read    []*domain.Project
}

// Freshness reads, in one BatchGetItem, the viewer's profile (when profile
// is set) and the projects ids (at most MaxFreshnessProjects), each item
// whole (a projection would cost the same: an item is billed by its size,
// rounded up to 4 KB). Returns EINVALID, EUNAVAILABLE, EINTERNAL.
func (s *Store) Freshness(ctx context.Context, viewer string, profile bool, ids []string) (*Freshness, error) {
	if err := domain.ValidUserID(viewer); err != nil {
		return nil, err
	}
	if len(ids) > MaxFreshnessProjects {
		return nil, domain.Errorf(domain.EINTERNAL, "a freshness check reads at most %d projects", MaxFreshnessProjects)
	}
	keys := make([]key, 0, len(ids)+1)
	if profile {
		keys = append(keys, userKey(viewer))
	}
	for _, id := range ids {
		pu, err := domain.ParseProjectID(id)
		if err != nil {
			return nil, err
		}
		keys = append(keys, projectKey(pu))
	}
	if len(keys) == 0 {
		return &Freshness{}, nil
	}
	items, err := s.getItems(ctx, keys)
	if err != nil {
		return nil, err
	}
	f := &Freshness{Read: make([]*domain.Project, len(ids))}
	if profile {
		if items[0] != nil {
			if f.Profile, err = decodeAs[*domain.User](items[0]); err != nil {
				return nil, err
			}
		}
		items = items[1:]
	}
	for i, it := range items {
		if it != nil {
			if f.Read[i], err = decodeAs[*domain.Project](it); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// PendingProfiles lists the users whose changed profile the cleanup worker
// has not yet copied into the change logs of all their projects (their
// jobs, changeprofile.go), at most limit of them in one Query; more
// reports that there are more. While a user's job is pending, the seqs of
// their projects may not yet reflect their new name. Returns EUNAVAILABLE,
// EINTERNAL.
func (s *Store) PendingProfiles(ctx context.Context, limit int) (users []string, more bool, err error) {
	p := pendingProfileJobs
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{TableName: &s.table, KeyConditionExpression: aws.String(keyBeginsWith),
		ExpressionAttributeNames: p.names(), ConsistentRead: aws.Bool(strong(ctx)), Limit: aws.Int32(int32(limit)),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: cleanupPK}, ":prefix": &types.AttributeValueMemberS{Value: p.prefix}}})
	if err != nil {
		return nil, false, wrap(err, "reading the pending profile jobs")
	}
	for _, it := range out.Items {
		job, err := decodeAs[*cleanupItem](it)
		if err != nil {
			return nil, false, err
		}
		users = append(users, job.Target)
	}
	return users, len(out.LastEvaluatedKey) > 0, nil
}
