package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/domain"
)

// Ref names one object for a point read.
type Ref struct {
	Kind domain.Kind
	ID   string // user, project, task or comment id
	User string // with KindProject and a non-empty User: that user's membership
}

// UserRef, ProjectRef, MemberRef, TaskRef and CommentRef make Refs.
func UserRef(id string) Ref    { return Ref{Kind: domain.KindUser, ID: id} }
func ProjectRef(id string) Ref { return Ref{Kind: domain.KindProject, ID: id} }
func MemberRef(project, user string) Ref {
	return Ref{Kind: domain.KindProject, ID: project, User: user}
}
func TaskRef(id string) Ref    { return Ref{Kind: domain.KindTask, ID: id} }
func CommentRef(id string) Ref { return Ref{Kind: domain.KindComment, ID: id} }

func (r Ref) key() (key, error) {
	switch r.Kind {
	case domain.KindUser:
		if err := domain.ValidUserID(r.ID); err != nil {
			return key{}, err
		}
		return userKey(r.ID), nil
	case domain.KindProject:
		p, err := domain.ParseProjectID(r.ID)
		if err != nil {
			return key{}, err
		}
		if r.User != "" {
			if err := domain.ValidUserID(r.User); err != nil {
				return key{}, err
			}
			return memberKey(p, r.User), nil
		}
		return projectKey(p), nil
	case domain.KindTask:
		t, err := domain.ParseTaskID(r.ID)
		if err != nil {
			return key{}, err
		}
		return taskKey(t), nil
	case domain.KindComment:
		t, c, err := domain.SplitCommentID(r.ID)
		if err != nil {
			return key{}, err
		}
		return commentKey(t, c), nil
	}
	return key{}, domain.Errorf(domain.EINVALID, "%q is not an id", domain.Clip(r.ID))
}

// Get reads many objects by reference in as few BatchGetItem calls as the
// 100-key limit allows. It returns, in the order of refs, a *User, *Project,
// *Member, *Task or *Comment, or an error per ref: ENOTFOUND for a missing
// object, EINVALID for a malformed id. A failure of the table is returned for
// every ref (EUNAVAILABLE, EINTERNAL).
func (s *Store) Get(ctx context.Context, refs []Ref) ([]any, []error) {
	vals := make([]any, len(refs))
	errs := make([]error, len(refs))
	keys := make([]key, 0, len(refs))
	idx := make([]int, 0, len(refs))
	for i, r := range refs {
		k, err := r.key()
		if err != nil {
			errs[i] = err
			continue
		}
		keys = append(keys, k)
		idx = append(idx, i)
	}
	items, err := s.getItems(ctx, keys)
	for j, i := range idx {
		switch {
		case err != nil:
			errs[i] = err
		case items[j] == nil:
			errs[i] = domain.Errorf(domain.ENOTFOUND, "%s not found", refs[i].what())
		default:
			vals[i], errs[i] = decode(items[j])
			errs[i] = internal(errs[i], "decoding an item")
		}
	}
	return vals, errs
}

func (r Ref) what() string {
	switch {
	case r.Kind == domain.KindUser:
		return "user " + domain.Clip(r.ID)
	case r.Kind == domain.KindProject && r.User != "":
		return "membership"
	case r.Kind == domain.KindProject:
		return "project " + r.ID
	case r.Kind == domain.KindTask:
		return "task " + r.ID
	case r.Kind == domain.KindComment:
		return "comment " + r.ID
	}
	return "object"
}

// getOne reads one item with a strongly consistent GetItem; nil when missing.
func (s *Store) getOne(ctx context.Context, k key) (item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k.av(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, wrap(err, "reading an item")
	}
	return out.Item, nil
}
