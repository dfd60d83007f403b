package dynamo

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// Sync marks (docs/sync.md, "Marks"): what lets a sync of a viewer in
// many projects read only the projects that changed. A mark is an item in
// the viewer's own partition (syncMarkKey: USER#<u> / SYNC#<p>) saying
// that the viewer's sync was caught up with project p at its seq n; the
// project's item lists the users who hold a mark of it (attrMarked, a
// string set). The rule that keeps a mark true:
//
//	a mark (u, p, n) exists  ⇒  u is in p's set  and  p's seq is n.
//
// A mark is written with its user's entry in the set, in one transaction
// on the condition that the project's seq is still n (Mark). Every write
// that moves a project's seq, and its deletion, is conditioned on the
// project having no marks (attribute_not_exists(marked): finish, the
// whole put of updateProject, deleteProject); one that finds marks first
// deletes them with their users' entries, in one transaction (unmark),
// and is sent again. So while a mark exists its project has not changed,
// and a sync that finds a project's mark at its token's position has
// nothing to read of it: one Query of the viewer's partition (the profile
// and the marks, SyncView) tells which of their projects to read.
//
// Cost: a sync writes a mark only for a viewer in more projects than one
// batch reads (graph's sync decides), after it caught up with a project;
// the project's next change then costs one more transaction (the
// unmark). A viewer in few projects, and a project whose members are all
// in few, pay nothing.

const (
	typeSyncMark = "SYNCMARK"
	// attrMarked is a project's set of the users who hold a mark of it.
	attrMarked = "marked"
	// markBatch is how many marks one transaction writes (two actions each).
	markBatch = 50
)

// syncMarkItem is user u's mark of project pu at seq.
func syncMarkItem(u, pu string, seq int64) item {
	it := syncMarkKey(u, pu).av()
	it["type"] = &types.AttributeValueMemberS{Value: typeSyncMark}
	it[attrSeq] = &types.AttributeValueMemberN{Value: strconv.FormatInt(seq, 10)}
	return it
}

// unmarked is the condition, on a project's item, that no user holds a
// mark of it: every write that moves its seq or deletes it needs it.
func unmarked() expression.ConditionBuilder {
	return expression.AttributeNotExists(expression.Name(attrMarked))
}

// SyncView is what a sync reads of its viewer's own partition: the
// profile (nil: none) and the marks, project id → the seq it was caught up
// with there.
type SyncView struct {
	Profile *domain.User
	Marks   map[string]int64
}

// SyncView reads the viewer's partition, their profile and their marks, in
// one strongly consistent Query (the profile is at most about 170 KB, the
// marks 60 bytes each: one page). Returns EINVALID, EUNAVAILABLE,
// EINTERNAL.
func (s *Store) SyncView(ctx context.Context, viewer string) (*SyncView, error) {
	if err := domain.ValidUserID(viewer); err != nil {
		return nil, err
	}
	items, err := s.queryAll(WithConsistency(ctx, SyncRead), wholePartition, userPK(viewer))
	if err != nil {
		return nil, err
	}
	v := &SyncView{Marks: map[string]int64{}}
	for _, it := range items {
		switch str(it, "type") {
		case typeUser:
			if v.Profile, err = decodeAs[*domain.User](it); err != nil {
				return nil, err
			}
		case typeSyncMark:
			v.Marks[domain.ProjectIDOf(str(it, attrSK)[len(markPrefix):])] = numberOf(it, attrSeq)
		}
	}
	return v, nil
}

// Mark records that viewer's sync is caught up with each project of seqs
// (id → seq) at that seq, in transactions of markBatch projects: the
// project's set gains the viewer on the condition that its seq is still
// the one given, and the mark is put. A project that changed meanwhile
// fails its condition and is left out (the transaction is sent again
// without the projects whose conditions failed, once). It returns how many
// marks it wrote. Returns EINVALID, EUNAVAILABLE, ECONFLICT.
func (s *Store) Mark(ctx context.Context, viewer string, seqs map[string]int64) (int, error) {
	ids := make([]string, 0, len(seqs))
	for id := range seqs {
		if _, err := domain.ParseProjectID(id); err != nil {
			return 0, err
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	n := 0
	for chunk := range slices.Chunk(ids, markBatch) {
		for attempt := 0; attempt < 2 && len(chunk) > 0; attempt++ {
			failed, err := s.markAll(ctx, viewer, chunk, seqs)
			if err != nil {
				return n, err
			}
			if len(failed) == 0 {
				n += len(chunk)
				break
			}
			chunk = slices.DeleteFunc(slices.Clone(chunk), func(id string) bool { return failed[id] })
		}
	}
	return n, nil
}

// markAll writes the marks of projects ids in one transaction; when it is
// cancelled by the condition of some, it returns those.
func (s *Store) markAll(ctx context.Context, viewer string, ids []string, seqs map[string]int64) (map[string]bool, error) {
	var t txn
	for _, id := range ids {
		pu := ulidOf(id)
		add := expression.Add(expression.Name(attrMarked), expression.Value(stringSet{viewer}))
		t.update(s.table, projectKey(pu), add, ptr(seqIs(seqs[id]).And(exists())), errRetry)
		t.put(s.table, syncMarkItem(viewer, pu, seqs[id]), nil, nil)
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: t.items})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil, wrap(err, "writing sync marks")
	}
	failed := map[string]bool{}
	for i, r := range tce.CancellationReasons {
		if aws.ToString(r.Code) == "ConditionalCheckFailed" && i%2 == 0 && i/2 < len(ids) {
			failed[ids[i/2]] = true
		}
	}
	if len(failed) == 0 { // cancelled otherwise (a conflict): none written, none to leave out
		return nil, domain.Errorf(domain.ECONFLICT, concurrentChange)
	}
	return failed, nil
}

// unmark deletes the marks of project pu held by users (its set, as a
// write that needs it unmarked found it), and takes them out of the set,
// in one transaction (at most MaxMembers + 1 actions: only members hold
// marks, and a membership's change is one the set must be empty for).
// The set keeps whoever marked the project since it was read: the write
// that needs it empty then fails again, and unmarks again.
func (s *Store) unmark(ctx context.Context, pu string, users []string) error {
	for chunk := range slices.Chunk(users, maxTxnItems-1) { // each user's mark with their entry, never apart
		var t txn
		del := expression.Delete(expression.Name(attrMarked), expression.Value(stringSet(chunk)))
		t.update(s.table, projectKey(pu), del, ptr(exists()), errRetry)
		for _, u := range chunk {
			t.del(s.table, syncMarkKey(u, pu), nil, nil)
		}
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: t.items})
		var tce *types.TransactionCanceledException
		if errors.As(err, &tce) {
			return errRetry // the project deleted, or a conflict: the write reads again
		}
		if err != nil {
			return wrap(err, "deleting sync marks")
		}
	}
	return nil
}

// markedBy returns the users a project item's set lists (none: no marks).
func markedBy(it item) []string {
	set, _ := it[attrMarked].(*types.AttributeValueMemberSS)
	if set == nil {
		return nil
	}
	return set.Value
}

// stringSet is a string set (SS) as an expression's value: a []string
// would be a list.
type stringSet []string

func (s stringSet) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberSS{Value: s}, nil
}

// SyncProjects reads projects ids (at most 100 less one) with what
// viewer's profile says of them (its copies of them), in one strongly
// consistent BatchGetItem: a sync's visibility check beside the projects'
// seqs. Each item is read without what a sync does not need: a project
// without its marks, the profile with the copies of these projects only
// (seen: a profile with those copies, nil without a profile). A project
// that does not exist is nil. Returns EINVALID, EUNAVAILABLE, EINTERNAL.
func (s *Store) SyncProjects(ctx context.Context, viewer string, ids []string) (seen *domain.User, projects []*domain.Project, err error) {
	if err := domain.ValidUserID(viewer); err != nil {
		return nil, nil, err
	}
	if len(ids) >= maxBatchGet {
		return nil, nil, domain.Errorf(domain.EINTERNAL, "a sync reads at most %d projects at once", maxBatchGet-1)
	}
	keys := []key{userKey(viewer)}
	names := slices.Clone(projectAttrs)
	for _, id := range ids {
		pu, err := domain.ParseProjectID(id)
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, projectKey(pu))
		names = append(names, attrProjects+"."+pu)
	}
	items, err := s.getItemsOf(WithConsistency(ctx, SyncRead), keys, names)
	if err != nil {
		return nil, nil, err
	}
	if items[0] != nil {
		var d decoder
		seen = &domain.User{ID: viewer, Projects: d.projects(items[0], attrProjects)}
		if d.err != nil {
			return nil, nil, d.err
		}
	}
	projects = make([]*domain.Project, len(ids))
	for i, it := range items[1:] {
		if it != nil {
			if projects[i], err = decodeAs[*domain.Project](it); err != nil {
				return nil, nil, err
			}
		}
	}
	return seen, projects, nil
}

// projectAttrs are the attributes of a project's item but its marks
// (projectItem's), and the profile's type: what SyncProjects reads.
var projectAttrs = func() []string {
	names := []string{attrPK, attrSK}
	t := reflect.TypeFor[projectItem]()
	for i := range t.NumField() {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("dynamodbav"), ","); n != "" {
			names = append(names, n)
		}
	}
	return names
}()
