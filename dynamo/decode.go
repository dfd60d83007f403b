package dynamo

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// Hand-written decoding of stored items into domain objects: what
// attributevalue.UnmarshalMap does with the item structs of items.go, without
// its reflection (a dashboard decodes some 1,500 items). It reads exactly the
// attributes the structs name, with the same rules (TestDecodeMatchesAttributevalue):
// an attribute that is missing or NULL leaves the zero value, a number is
// taken as its text where a string is expected, a value of another type is
// an error, and the attributes the structs do not name are ignored. Names
// are matched exactly (attributevalue would also take a name that differs
// in case only).

// decode turns a stored item into its domain object by its type attribute:
// *User, *Project, *Member, *domain.Task, *Comment, or *tagItem / *cleanupItem.
func decode(m item) (any, error) {
	var d decoder
	typ := d.s(m, "type")
	if d.err != nil {
		return nil, d.err
	}
	var v any
	switch typ {
	case typeUser:
		v = &domain.User{ID: d.s(m, "id"), Name: d.s(m, "name"), Email: d.sp(m, "email"), CreatedAt: parseTime(d.s(m, "createdAt")),
			Rev: d.n(m, "rev"), Projects: d.projects(m, attrProjects)}
		d.keys(m, "PK", "SK")
	case typeProject:
		v = &domain.Project{ID: d.s(m, "id"), Name: d.s(m, "name"), Description: d.sp(m, "description"), OwnerID: d.s(m, "ownerId"),
			CreatedAt: parseTime(d.s(m, "createdAt")), TaskCounts: domain.TaskCounts{Todo: d.n(m, attrTodoCount),
				InProgress: d.n(m, attrInProgressCount), Done: d.n(m, attrDoneCount)},
			Seq: int64(d.n(m, attrSeq)), ProjectSeq: int64(d.n(m, attrProjectSeq)), SeqAt: parseTime(d.s(m, attrSeqAt))}
		d.keys(m, "PK", "SK")
		d.n(m, "rev")
	case typeMember:
		v = &domain.Member{ProjectID: d.s(m, "projectId"), UserID: d.s(m, "userId"), Role: domain.Role(d.s(m, "role")),
			JoinedAt: parseTime(d.s(m, "joinedAt"))}
		d.keys(m, "PK", "SK", "GSI1PK", "GSI1SK")
		d.n(m, "assignSeq")
		d.n(m, attrSyncSeq)
		d.n(m, attrBorn)
		d.n(m, "profileRev")
	case typeTask:
		t, err := d.task(m)
		if err != nil {
			return nil, err
		}
		d.keys(m, "PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI4PK")
		v = t
	case typeComment:
		v = &domain.Comment{ID: d.s(m, "id"), TaskID: d.s(m, "taskId"), AuthorID: d.s(m, "authorId"), Body: d.s(m, "body"),
			CreatedAt: parseTime(d.s(m, "createdAt"))}
		d.keys(m, "PK", "SK")
	case typeTag:
		v = &tagItem{PK: d.s(m, "PK"), SK: d.s(m, "SK"), GSI1PK: d.s(m, "GSI1PK"), GSI1SK: d.s(m, "GSI1SK"), Type: typ,
			Task: d.s(m, "taskId"), Project: d.s(m, "projectId"), Assignee: d.s(m, "assigneeId")}
	case typeCleanup:
		v = &cleanupItem{PK: d.s(m, "PK"), SK: d.s(m, "SK"), Type: typ, Kind: d.s(m, "kind"), Target: d.s(m, "target"),
			CreatedAt: d.s(m, "createdAt"), Project: d.s(m, "project"), Rev: d.n(m, "rev")}
	default:
		return nil, fmt.Errorf("item of unknown type %q", typ)
	}
	if d.err != nil {
		return nil, d.err
	}
	return v, nil
}

// task reads a task's own attributes (taskFields) from its item.
func (d *decoder) task(m item) (*domain.Task, error) {
	t := &domain.Task{ID: d.s(m, "id"), ProjectID: d.s(m, "projectId"), Title: d.s(m, "title"), Description: d.sp(m, "description"),
		Status: domain.TaskStatus(d.s(m, "status")), Tags: d.ss(m, "tags"), CreatedAt: parseTime(d.s(m, "createdAt")),
		UpdatedAt: parseTime(d.s(m, "updatedAt")), Version: d.n(m, "version"), CommentCount: d.n(m, attrCommentCount)}
	due, assignee := d.s(m, "dueDate"), d.s(m, "assigneeId")
	if d.err != nil {
		return nil, d.err
	}
	if due != "" {
		dd, err := domain.ParseDate(due)
		if err != nil {
			return nil, err
		}
		t.DueDate = &dd
	}
	if assignee != "" {
		t.AssigneeID = &assignee
	}
	if t.Tags == nil {
		t.Tags = []string{}
	}
	return t, nil
}

// decoder reads attributes of an item, keeping the first error.
type decoder struct{ err error }

func (d *decoder) fail(attr string, av types.AttributeValue, want string) {
	if d.err == nil {
		d.err = fmt.Errorf("attribute %s: cannot decode %T as %s", attr, av, want)
	}
}

// s reads a string attribute (a number's text too): "" when missing or
// NULL.
func (d *decoder) s(m item, attr string) string {
	switch v := m[attr].(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	case nil, *types.AttributeValueMemberNULL:
		return ""
	default:
		d.fail(attr, v, "a string")
		return ""
	}
}

// sp reads an optional string attribute (a number's text too): nil when
// missing or NULL.
func (d *decoder) sp(m item, attr string) *string {
	switch v := m[attr].(type) {
	case *types.AttributeValueMemberS:
		s := v.Value
		return &s
	case *types.AttributeValueMemberN:
		s := v.Value
		return &s
	case nil, *types.AttributeValueMemberNULL:
		return nil
	default:
		d.fail(attr, v, "a string")
		return nil
	}
}

// n reads an integer attribute: 0 when missing or NULL.
func (d *decoder) n(m item, attr string) int {
	switch v := m[attr].(type) {
	case *types.AttributeValueMemberN:
		i, err := strconv.ParseInt(v.Value, 10, strconv.IntSize)
		if err != nil {
			d.fail(attr, v, "an integer")
		}
		return int(i)
	case nil, *types.AttributeValueMemberNULL:
		return 0
	default:
		d.fail(attr, v, "an integer")
		return 0
	}
}

// ss reads a list of strings (numbers' texts too), stored as a list or a
// set: nil when missing or NULL.
func (d *decoder) ss(m item, attr string) []string {
	switch v := m[attr].(type) {
	case *types.AttributeValueMemberL:
		out := make([]string, len(v.Value))
		for i, e := range v.Value {
			switch s := e.(type) {
			case *types.AttributeValueMemberS:
				out[i] = s.Value
			case *types.AttributeValueMemberN:
				out[i] = s.Value
			case *types.AttributeValueMemberNULL:
			default:
				d.fail(attr, v, "a list of strings")
				return nil
			}
		}
		return out
	case *types.AttributeValueMemberSS:
		return append([]string(nil), v.Value...)
	case *types.AttributeValueMemberNS:
		return append([]string(nil), v.Value...)
	case nil, *types.AttributeValueMemberNULL:
		return nil
	default:
		d.fail(attr, v, "a list of strings")
		return nil
	}
}

// projects reads a profile's copies of its projects (ULID → name) as
// project id → name: an empty map when missing.
func (d *decoder) projects(m item, attr string) map[string]string {
	out := map[string]string{}
	switch v := m[attr].(type) {
	case *types.AttributeValueMemberM:
		for u, name := range v.Value {
			if u == keepCopy {
				continue
			}
			s, ok := name.(*types.AttributeValueMemberS)
			if !ok {
				d.fail(attr, v, "a map of strings")
				return out
			}
			out[domain.ProjectIDOf(u)] = s.Value
		}
	case nil, *types.AttributeValueMemberNULL:
	default:
		d.fail(attr, v, "a map of strings")
	}
	return out
}

// keys checks that key attributes the domain object does not keep are
// strings, as decoding them into the item struct would.
func (d *decoder) keys(m item, attrs ...string) {
	for _, a := range attrs {
		d.s(m, a)
	}
}
