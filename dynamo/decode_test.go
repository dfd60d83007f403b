package dynamo

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// decodeReflect is decode as it was, through attributevalue's reflection
// over the item structs of items.go: the reference the hand-written decode
// must match.
// (decodeReflect: see above.)
// *User, *Project, *Member, *Task, *Comment, or *tagItem / *cleanupItem.
func decodeReflect(m item) (any, error) {
	var head struct {
		Type string `dynamodbav:"type"`
	}
	if err := attributevalue.UnmarshalMap(m, &head); err != nil {
		return nil, err
	}
	switch head.Type {
	case typeUser:
		var it userItem
		if err := attributevalue.UnmarshalMap(m, &it); err != nil {
			return nil, err
		}
		ps := map[string]string{}
		for u, name := range it.Projects {
			if u == keepCopy {
				continue
			}
			ps[domain.ProjectIDOf(u)] = name
		}
		return &domain.User{ID: it.ID, Name: it.Name, Email: it.Email, CreatedAt: parseTime(it.CreatedAt), Rev: it.Rev, Projects: ps}, nil
	case typeProject:
		var it projectItem
		if err := attributevalue.UnmarshalMap(m, &it); err != nil {
			return nil, err
		}
		return &domain.Project{ID: it.ID, Name: it.Name, Description: it.Description, OwnerID: it.OwnerID,
			CreatedAt: parseTime(it.CreatedAt), TaskCounts: domain.TaskCounts{Todo: it.TodoCount, InProgress: it.InProgressCount,
				Done: it.DoneCount}, Seq: it.Seq, ProjectSeq: it.ProjectSeq}, nil
	case typeMember:
		var it memberItem
		if err := attributevalue.UnmarshalMap(m, &it); err != nil {
			return nil, err
		}
		return &domain.Member{ProjectID: it.Project, UserID: it.User, Role: domain.Role(it.Role), JoinedAt: parseTime(it.JoinedAt)}, nil
	case typeTask:
		var it taskItem
		if err := attributevalue.UnmarshalMap(m, &it); err != nil {
			return nil, err
		}
		t := &domain.Task{ID: it.ID, ProjectID: it.Project, Title: it.Title, Description: it.Description,
			Status: domain.TaskStatus(it.Status), Tags: it.Tags, CreatedAt: parseTime(it.CreatedAt),
			UpdatedAt: parseTime(it.UpdatedAt), Version: it.Version, CommentCount: it.CommentCount}
		if it.DueDate != "" {
			d, err := domain.ParseDate(it.DueDate)
			if err != nil {
				return nil, err
			}
			t.DueDate = &d
		}
		if it.Assignee != "" {
			a := it.Assignee
			t.AssigneeID = &a
		}
		if t.Tags == nil {
			t.Tags = []string{}
		}
		return t, nil
	case typeComment:
		var it commentItem
		if err := attributevalue.UnmarshalMap(m, &it); err != nil {
			return nil, err
		}
		return &domain.Comment{ID: it.ID, TaskID: it.Task, AuthorID: it.Author, Body: it.Body, CreatedAt: parseTime(it.CreatedAt)}, nil
	case typeTag:
		var it tagItem
		err := attributevalue.UnmarshalMap(m, &it)
		return &it, err
	case typeCleanup:
		var it cleanupItem
		err := attributevalue.UnmarshalMap(m, &it)
		return &it, err
	}
	return nil, fmt.Errorf("item of unknown type %q", head.Type)
}

// decodeSamples are stored items of every type, as the write path makes
// them, with and without their optional attributes.
func decodeSamples() []item {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)
	email, desc := "ann@example.com", "a description"
	due, _ := domain.ParseDate("2026-05-01")
	assignee := "u-ann"
	pid, tid := domain.ProjectIDOf("01HZZZZZZZZZZZZZZZZZZZZZZP"), domain.TaskIDOf("01HZZZZZZZZZZZZZZZZZZZZZZT")
	full := &domain.Task{ID: tid, ProjectID: pid, Title: "t", Description: &desc, Status: "TODO", DueDate: &due, AssigneeID: &assignee,
		Tags: []string{"a", "urgent"}, CreatedAt: at, UpdatedAt: at.Add(time.Hour), Version: 7, CommentCount: 3}
	bare := &domain.Task{ID: tid, ProjectID: pid, Title: "", Status: "DONE", Tags: []string{}, CreatedAt: at, UpdatedAt: at}
	return []item{
		userToItem(&domain.User{ID: "u-ann", Name: "Ann", Email: &email, CreatedAt: at}, 3),
		userToItem(&domain.User{ID: "u-bob", Name: "", CreatedAt: at}, 0),
		projectToItem(&domain.Project{ID: pid, Name: "P", Description: &desc, OwnerID: "u-ann", CreatedAt: at,
			TaskCounts: domain.TaskCounts{Todo: 4, InProgress: 2, Done: 9}}, 2),
		projectToItem(&domain.Project{ID: pid, Name: "P", OwnerID: "u-ann", CreatedAt: at}, 0),
		memberToItem(&domain.Member{ProjectID: pid, UserID: "u-ann", Role: "OWNER", JoinedAt: at}),
		taskToItem(full),
		taskToItem(bare),
		tagLinkItem(full, "urgent"),
		tagLinkItem(bare, "x"),
		commentToItem(&domain.Comment{ID: domain.CommentIDOf("01HZZZZZZZZZZZZZZZZZZZZZZT", "01HZZZZZZZZZZZZZZZZZZZZZZC"), TaskID: tid, AuthorID: "u-ann", Body: "hi", CreatedAt: at}),
		cleanupToItem(cleanupProject, "01HZZZZZZZZZZZZZZZZZZZZZZP", at),
	}
}

// mutations of one attribute: what a hand-edited or older item may hold.
var mutations = []struct {
	name string
	av   func(types.AttributeValue) types.AttributeValue // nil: remove
}{
	{"missing", nil},
	{"NULL", func(types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberNULL{Value: true} }},
	{"empty string", func(types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberS{} }},
	{"a string", func(types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberS{Value: "2026-01-02"}
	}},
	{"a number", func(types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberN{Value: "42"} }},
	{"a fraction", func(types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberN{Value: "4.5"} }},
	{"a huge number", func(types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberN{Value: "1e40"} }},
	{"a bool", func(types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: true} }},
	{"a string set", func(types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberSS{Value: []string{"b", "a"}}
	}},
	{"a list of strings", func(types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}}}
	}},
	{"a list with a NULL", func(types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberNULL{Value: true}, &types.AttributeValueMemberS{Value: "y"}}}
	}},
	{"a list with a number", func(types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberN{Value: "1"}}}
	}},
	{"a number set", func(types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberNS{Value: []string{"1", "2"}}
	}},
	{"binary", func(types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberB{Value: []byte("x")}
	}},
	{"an empty list", func(types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberL{} }},
	{"a map", func(types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberM{Value: item{}} }},
}

// decodeBoth decodes m both ways and fails unless they agree: both fail, or
// both give equal objects.
func decodeBoth(t *testing.T, what string, m item) {
	t.Helper()
	got, gotErr := decode(m)
	want, wantErr := decodeReflect(m)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%s: decode error %v, attributevalue error %v", what, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: decode = %#v, attributevalue = %#v", what, got, want)
	}
}

// TestDecodeMatchesAttributevalue: for every item type, the hand-written
// decoder gives what attributevalue gives, for the items the write path
// makes and for each attribute missing, NULL or of any other type, and
// for attributes the structs do not name. (One deliberate difference:
// attributevalue also takes an attribute whose name differs in case only,
// e.g. "CreatedAt" for createdAt, where the exact name is missing; decode
// reads exactly the names the write path writes.)
func TestDecodeMatchesAttributevalue(t *testing.T) {
	for _, m := range decodeSamples() {
		typ := m["type"].(*types.AttributeValueMemberS).Value
		t.Run(typ, func(t *testing.T) {
			decodeBoth(t, "as written", m)
			attrs := slices.Sorted(maps.Keys(m))
			attrs = append(attrs, "email", "description", "dueDate", "assigneeId", "tags", "rev", "unknown")
			for _, attr := range attrs {
				for _, mu := range mutations {
					if attr == "type" && mu.av != nil {
						continue // another type is another item: below
					}
					c := maps.Clone(m)
					if mu.av == nil {
						delete(c, attr)
					} else {
						c[attr] = mu.av(c[attr])
					}
					decodeBoth(t, fmt.Sprintf("%s %s", attr, mu.name), c)
				}
			}
		})
	}
	for _, typ := range []string{"", "NOPE", "user"} {
		c := item{"type": &types.AttributeValueMemberS{Value: typ}}
		if _, err := decode(c); err == nil {
			t.Errorf("decode of an item of type %q: no error", typ)
		}
	}
	if _, err := decode(item{"type": &types.AttributeValueMemberN{Value: "1"}}); err == nil {
		t.Error("decode of an item whose type is a number: no error")
	}
}

// FuzzDecodeMatchesAttributevalue sets one attribute of a sample item to a
// fuzzed string or number and checks that both decoders agree.
func FuzzDecodeMatchesAttributevalue(f *testing.F) {
	f.Add(uint8(5), "dueDate", "2026-02-30", false)
	f.Add(uint8(5), "version", "-0", true)
	f.Add(uint8(0), "rev", "9223372036854775808", true)
	f.Add(uint8(9), "createdAt", "not a time", false)
	samples := decodeSamples()
	f.Fuzz(func(t *testing.T, which uint8, attr, value string, number bool) {
		if attr == "type" {
			return
		}
		c := maps.Clone(samples[int(which)%len(samples)])
		for _, known := range append(slices.Collect(maps.Keys(c)), "email", "description", "dueDate", "assigneeId", "tags", "rev") {
			if attr != known && strings.EqualFold(attr, known) {
				// attributevalue also takes an attribute whose name differs
				// only in case; decode, deliberately, only the exact names
				// the write path writes.
				return
			}
		}
		if number {
			c[attr] = &types.AttributeValueMemberN{Value: value}
		} else {
			c[attr] = &types.AttributeValueMemberS{Value: value}
		}
		decodeBoth(t, attr+"="+value, c)
	})
}
