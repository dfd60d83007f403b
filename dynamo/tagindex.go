package dynamo

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// The tag index: access pattern 6 without a Query per project. For each
// project and tag in use there, one item in the project's partition
// (tagIndexKey) lists the project's tasks with the tag: a map (attrTasks)
// from each task's ULID to its due date and assignee. A page of tasksByTag reads the indexes of all the
// viewer's projects with one BatchGetItem, orders their entries as the tag
// links' GSI1 sort keys order (so cursors are the same either way), and
// reads only the page's tasks, with their projects and assignees, in one
// more BatchGetItem.
//
// Every write that adds, removes or changes (due date, assignee, title) a
// task's tag changes the index in the task's own transaction (indexTags),
// so the index is exactly the tag links, and its titles the tasks'. An index holds at most TagIndexCap
// units of entries (entryUnits: an entry of up to 128 bytes without its
// title is one unit, and most are about 75 bytes; one whose assignee's id
// is long, more; and one unit for its title), so at most 2,000 × 128
// bytes, 256 KB, whatever the ids and titles; the write that
// would pass the cap marks it full instead, and from then on a page that meets a full index is read
// through the tag links, one Query per project, as before the index
// (TasksByTag). A table written by a version without the index says so by
// lacking the tagIndexed marker (EnsureTable, recount); until an export and
// import rebuild the indexes, TasksByTag reads the tag links.

const (
	typeTagIndex = "TAGS"
	// attrTasks is an index's map of entries; attrEntries counts their
	// units (entryUnits); attrFull marks a full index.
	attrTasks   = "tasks"
	attrEntries = "entries"
	attrFull    = "full"
	// keepEntry was in every map of tasks written before the embedded
	// store had its own engine (its former engine could not query a
	// partition holding an empty map; the engine can, as DynamoDB does:
	// TestEdgesAgainstDynamoDBLocal). Maps may be empty now; the entry,
	// in tables written before, is no task and is skipped when read.
	keepEntry = "_"

	// DefaultTagIndexCap is Store.TagIndexCap's default, in units of
	// entries: at most 256 KB (about 100 KB for the 1,000 tasks of
	// ordinary entries, two units each with their titles' unit, it holds;
	// 13 read units for the index read, eventually consistent).
	DefaultTagIndexCap = 2000
	// unitBytes is what one unit of a tag index's entries holds.
	unitBytes = 128
)

// entryUnits is what the entry of a task (its ULID tu, its value v) counts
// towards its index's cap: one unit per 128 bytes or part of them of the
// entry without its title, as DynamoDB counts a map element (its name,
// its value and a byte), and one unit more for the title (at most
// maxEntryTitle bytes and its '|'), whether the entry carries it or not.
// So an entry counts the same written before titles were as after, a
// title's change never moves the count, and an index's bytes stay within
// its count × 128 whatever its entries' forms.
func entryUnits(tu, v string) int {
	if i := strings.IndexByte(v, '|'); i >= 0 {
		if j := strings.IndexByte(v[i+1:], '|'); j >= 0 {
			v = v[:i+1+j] // without its title
		}
	}
	return (len(tu)+len(v)+1+unitBytes-1)/unitBytes + 1
}

// tagIndexMiss is the failed condition of an index update: the index does
// not exist yet, or it is full or about to be (commitIndexed tries the next
// form of the update). It names every index of the transaction whose
// condition failed, as far as the store reports each item's reason (with).
type tagIndexMiss struct{ keys []key }

func (e *tagIndexMiss) Error() string { return "a tag index could not be updated as it is" }

// with is e and the indexes among the later items whose conditions failed
// too (reasons and fails: the items after e's, as many of each).
func (e *tagIndexMiss) with(reasons []types.CancellationReason, fails []error) *tagIndexMiss {
	all := &tagIndexMiss{keys: slices.Clone(e.keys)}
	for i, r := range reasons {
		if m, ok := fails[i].(*tagIndexMiss); ok && aws.ToString(r.Code) == "ConditionalCheckFailed" {
			all.keys = append(all.keys, m.keys...)
		}
	}
	return all
}

// entryName is the document path of task tu's entry.
func entryName(tu string) string { return attrTasks + "." + tu }

// entryValue is the entry of a task: its due date (noDue without one),
// '|', its assignee's id (empty without one), and, for a title of at most
// maxEntryTitle bytes, '|' and the title: a page whose tasks select no
// more than these is answered from the entries, with no read of the tasks
// (Tagged.Listed). An entry without a title (a longer one, or one written
// before titles were) has its task read.
func entryValue(t *domain.Task) string {
	if len(t.Title) <= maxEntryTitle {
		return linkValue(t) + "|" + t.Title
	}
	return linkValue(t)
}

// linkValue is what a task's tag links carry of it: its due date (noDue
// without one), '|', its assignee's id (empty without one). A link is
// rewritten when it moves (putTagLinks); a title's change rewrites only
// the entries.
func linkValue(t *domain.Task) string {
	d := noDue
	if t.DueDate != nil {
		d = t.DueDate.String()
	}
	a := ""
	if t.AssigneeID != nil {
		a = *t.AssigneeID
	}
	return d + "|" + a
}

// maxEntryTitle is the longest title (in bytes) a tag index's entry
// carries: with its '|', at most the one unit entryUnits counts for it.
const maxEntryTitle = 96

func (s *Store) tagIndexCap() int {
	if s.TagIndexCap > 0 {
		return s.TagIndexCap
	}
	return DefaultTagIndexCap
}

// indexChange is what a transaction changes in one tag index: entries
// set (added or rewritten) and taken out, the units it adds (new entries,
// and rewritten ones that grew), and by how many units the count moves.
type indexChange struct {
	set    map[string]string // entry name → value
	remove []string
	added  int
	delta  int
}

// indexTags notes in t the changes of the tag indexes of a task's project
// from the task as it was (old, nil when it is new) to the task as it will
// be (task, nil when it is deleted): an entry added for a tag it gains, taken
// out for a tag it loses, rewritten where its due date, assignee or title
// (entryValue) moved.
// commitIndexed turns them into one update per index.
func (s *Store) indexTags(t *txn, old, task *domain.Task) {
	ref := task
	if ref == nil {
		ref = old
	}
	pu, tu := ulidOf(ref.ProjectID), ulidOf(ref.ID)
	var was, is []string
	if old != nil {
		was = old.Tags
	}
	if task != nil {
		is = task.Tags
	}
	tags := slices.Clone(is)
	for _, tag := range was {
		if !slices.Contains(is, tag) {
			tags = append(tags, tag)
		}
	}
	for _, tag := range tags {
		inNew, inOld := slices.Contains(is, tag), slices.Contains(was, tag)
		moved := inNew && inOld && entryValue(old) != entryValue(task)
		if inNew == inOld && !moved {
			continue
		}
		k := tagIndexKey(pu, tag)
		if t.index == nil {
			t.index = map[key]*indexChange{}
		}
		c := t.index[k]
		if c == nil {
			c = &indexChange{set: map[string]string{}}
			t.index[k] = c
			t.indexOrder = append(t.indexOrder, k)
		}
		switch {
		case inNew && !inOld:
			v := entryValue(task)
			c.set[entryName(tu)] = v
			c.added += entryUnits(tu, v)
			c.delta += entryUnits(tu, v)
		case inOld && !inNew:
			c.remove = append(c.remove, entryName(tu))
			c.delta -= entryUnits(tu, entryValue(old))
		default:
			v := entryValue(task)
			c.set[entryName(tu)] = v
			grew := entryUnits(tu, v) - entryUnits(tu, entryValue(old))
			c.delta += grew
			c.added += max(grew, 0)
		}
	}
}

// How commitIndexed writes one tag index, from one attempt to the next
// when the index's condition fails (indexMode).
const (
	indexUpdate      = iota // change the entries of an index that exists and is not full
	indexCreate             // make the index: it has no entries map yet
	indexUpdateAgain        // it was made meanwhile by another write: change it
	indexFull               // it is full: mark it so, leave its entries
)

// writeIndexes adds to t one update per tag index it changes (indexTags),
// in the form mode says (indexUpdate when absent): on the condition that
// the index is not full and, where entries are added, has room for them;
// an index known to be full is only marked full again.
func (s *Store) writeIndexes(t *txn, mode map[key]int) {
	for _, k := range t.indexOrder {
		c := t.index[k]
		upd := expression.Set(expression.Name("type"), expression.Value(typeTagIndex))
		if _, full := s.fullIndexes.Load(k); full || mode[k] == indexFull {
			t.update(s.table, k, upd.Set(expression.Name(attrFull), expression.Value(true)), nil, nil)
			continue
		}
		notFull := expression.AttributeNotExists(expression.Name(attrFull))
		if mode[k] == indexCreate {
			m, units := map[string]string{}, 0
			for n, v := range c.set {
				tu := strings.TrimPrefix(n, attrTasks+".")
				m[tu] = v
				units += entryUnits(tu, v)
			}
			cond := notFull.And(expression.AttributeNotExists(expression.Name(attrTasks)))
			t.update(s.table, k, upd.Set(expression.Name(attrTasks), expression.Value(m)).
				Set(expression.Name(attrEntries), expression.Value(units)), &cond, &tagIndexMiss{keys: []key{k}})
			continue
		}
		for _, n := range slices.Sorted(maps.Keys(c.set)) {
			upd = upd.Set(expression.Name(n), expression.Value(c.set[n]))
		}
		for _, n := range c.remove {
			upd = upd.Remove(expression.Name(n))
		}
		if c.delta != 0 {
			upd = upd.Add(expression.Name(attrEntries), expression.Value(c.delta))
		}
		cond := notFull.And(expression.AttributeExists(expression.Name(attrTasks)))
		if c.added > 0 {
			cond = cond.And(expression.Name(attrEntries).LessThanEqual(expression.Value(s.tagIndexCap() - c.added)))
		}
		t.update(s.table, k, upd, &cond, &tagIndexMiss{keys: []key{k}})
	}
}

// commitIndexed commits the transaction build makes, with its tag index
// updates (writeIndexes). When an index's condition fails, it tries the
// next form of that index's update and commits build's transaction again:
// a change fails on an index that does not exist yet (then it is made), or
// on one that is full (then it is marked full, and known to be so from then
// on); at most three more attempts per index.
func (s *Store) commitIndexed(ctx context.Context, build func(t *txn) error) error {
	mode := map[key]int{}
	for {
		var t txn
		if err := build(&t); err != nil {
			return err
		}
		s.writeIndexes(&t, mode)
		err := s.commit(ctx, &t)
		var miss *tagIndexMiss
		if !errors.As(err, &miss) {
			return err
		}
		// An index that gains entries and fails is most often new: try every
		// such index of the transaction as new at once (a store that
		// reports only the first failed condition would otherwise cost one
		// attempt per new index).
		keys := slices.Clone(miss.keys)
		if c := t.index[miss.keys[0]]; c != nil && c.added > 0 && mode[miss.keys[0]] == indexUpdate {
			for _, k := range t.indexOrder {
				if t.index[k].added > 0 && mode[k] == indexUpdate && !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
		for _, k := range keys {
			if mode[k]++; mode[k] == indexFull {
				s.fullIndexes.Store(k, true)
			}
			if mode[k] > indexFull {
				return domain.Errorf(domain.EINTERNAL, "a tag index could not be written") // cannot happen: a full index is only marked
			}
		}
	}
}
