package dynamo

// The change log's reads: a project's entries (Changes), a viewer's
// departure, where memberships began, a project's seq, a deleted task's
// comments.

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/policy"
)

// numberOf reads an integer attribute of an item (0 when absent).
func numberOf(m item, attr string) int64 {
	if n, ok := m[attr].(*types.AttributeValueMemberN); ok {
		v, _ := strconv.ParseInt(n.Value, 10, 64)
		return v
	}
	return 0
}

// Changes reads project's change log after position after and at most up
// to upTo, at most limit entries, oldest first (one strongly consistent
// Query), and reports whether more entries lie in that range. The caller
// bounds upTo by a seq it read: entries above it may be visible while an
// earlier one is not yet. Returns EINVALID, EUNAVAILABLE, EINTERNAL.
func (s *Store) Changes(ctx context.Context, projectID string, after, upTo int64, limit int) ([]Change, bool, error) {
	pu, err := domain.ParseProjectID(projectID)
	if err != nil {
		return nil, false, err
	}
	if upTo <= after || limit <= 0 {
		return nil, false, nil
	}
	p := changesOfProject
	kb := expression.KeyAnd(expression.Key(p.pkAttr).Equal(expression.Value(changesPK(pu))),
		expression.KeyBetween(expression.Key(p.skAttr), expression.Value(positionSK(after+1)), expression.Value(positionSK(upTo))))
	ex, err := expression.NewBuilder().WithKeyCondition(kb).Build()
	if err != nil {
		return nil, false, internal(err, "building a query")
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{TableName: &s.table, KeyConditionExpression: ex.KeyCondition(),
		ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values(), ConsistentRead: aws.Bool(true),
		Limit: aws.Int32(int32(limit + 1))})
	if err != nil {
		return nil, false, wrap(err, "reading a change log")
	}
	items := out.Items
	// More lie in range past the page's limit, or past DynamoDB's 1 MB
	// page (a Query stops there with fewer items and a LastEvaluatedKey:
	// deleted tasks' entries list their comments, up to 80 KB each).
	more := len(items) > limit || out.LastEvaluatedKey != nil && len(items) > 0
	if len(items) > limit {
		items = items[:limit]
	}
	cs := make([]Change, 0, len(items))
	for _, it := range items {
		c, ok := decodeChange(it)
		if !ok {
			return nil, false, domain.Errorf(domain.EINTERNAL, "a change log entry of project %s is malformed", projectID)
		}
		cs = append(cs, c)
	}
	return cs, more, nil
}

// decodeChange reads a change log entry.
func decodeChange(m item) (Change, bool) {
	pos, ok := positionOf(str(m, attrSK))
	if !ok || str(m, "type") != typeChange || str(m, "id") == "" {
		return Change{}, false
	}
	c := Change{Pos: pos, Born: numberOf(m, attrBorn), ID: str(m, "id"), At: parseTime(str(m, "at"))}
	if b, ok := m["gone"].(*types.AttributeValueMemberBOOL); ok {
		c.Gone = b.Value
	}
	if s := str(m, "since"); s != "" {
		c.Since = parseTime(s)
	}
	var d decoder
	c.Comments = d.ss(m, "comments")
	for _, n := range d.ss(m, "commentsBorn") {
		b, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return Change{}, false
		}
		c.CommentsBorn = append(c.CommentsBorn, b)
	}
	return c, d.err == nil && len(c.CommentsBorn) == len(c.Comments)
}

// Departure returns the position of the change that last removed user
// from the project, as far as its change log keeps (0: none). Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) Departure(ctx context.Context, projectID, user string) (int64, error) {
	pu, err := domain.ParseProjectID(projectID)
	if err != nil {
		return 0, err
	}
	if err := domain.ValidUserID(user); err != nil {
		return 0, err
	}
	it, err := s.getOne(ctx, departureKey(pu, user))
	if err != nil || it == nil {
		return 0, err
	}
	return numberOf(it, "pos"), nil
}

// MembershipsBegun reads, for each pair of a project and a user, the
// user's current membership of the project as policy's fact, with where it
// began in the project's change log (its entry's born; nil: no
// membership), in one strongly consistent BatchGetItem per 100 pairs.
// Returns EINVALID, EUNAVAILABLE.
func (s *Store) MembershipsBegun(ctx context.Context, pairs [][2]string) ([]*policy.Membership, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	keys := make([]key, len(pairs))
	for i, pr := range pairs {
		pu, err := domain.ParseProjectID(pr[0])
		if err != nil {
			return nil, err
		}
		if err := domain.ValidUserID(pr[1]); err != nil {
			return nil, err
		}
		keys[i] = memberKey(pu, pr[1])
	}
	items, err := s.getItems(WithConsistency(ctx, SyncRead), keys)
	if err != nil {
		return nil, err
	}
	ms := make([]*policy.Membership, len(pairs))
	for i, it := range items {
		if it != nil {
			ms[i] = &policy.Membership{ProjectID: pairs[i][0], UserID: pairs[i][1], Began: entryOf(it).born}
		}
	}
	return ms, nil
}

// ProjectSeq reads a project's seq, the last position of its change log,
// strongly consistently (0 for a project that does not exist). Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) ProjectSeq(ctx context.Context, projectID string) (int64, error) {
	pu, err := domain.ParseProjectID(projectID)
	if err != nil {
		return 0, err
	}
	k := projectKey(pu)
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k.av(), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String(attrSeq)})
	if err != nil {
		return 0, wrap(err, "reading a project")
	}
	return numberOf(out.Item, attrSeq), nil
}

// commentRef is a comment of a deleted task, for its gone entry.
type commentRef struct {
	id   string
	born int64
}

// commentsOf reads a task's comments' ids and when they were born (a
// Query of the task's partition's comments, of those attributes only: a
// comment's body may be 40 KB, and a task has up to CommentCap comments).
func (s *Store) commentsOf(ctx context.Context, tu string) ([]commentRef, error) {
	p := commentsOfTask
	kb := expression.KeyAnd(expression.Key(p.pkAttr).Equal(expression.Value(taskPK(tu))),
		expression.KeyBeginsWith(expression.Key(p.skAttr), p.prefix))
	ex, err := expression.NewBuilder().WithKeyCondition(kb).
		WithProjection(expression.NamesList(expression.Name(attrPK), expression.Name(attrSK), expression.Name(attrSyncSeq),
			expression.Name(attrBorn))).Build() // the keys: a comment's id is filled in from them (leanitems.go)
	if err != nil {
		return nil, internal(err, "building a query")
	}
	q := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{TableName: &s.table, KeyConditionExpression: ex.KeyCondition(),
		ProjectionExpression: ex.Projection(), ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values(),
		ConsistentRead: aws.Bool(strong(ctx))})
	var refs []commentRef
	for q.HasMorePages() {
		out, err := q.NextPage(ctx)
		if err != nil {
			return nil, wrap(err, "reading a task's comments")
		}
		for _, it := range out.Items {
			if id := str(it, "id"); id != "" {
				refs = append(refs, commentRef{id: id, born: entryOf(it).born})
			}
		}
	}
	return refs, nil
}
