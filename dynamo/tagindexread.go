package dynamo

// The tag indexes' reads (tagEntries), their rebuild from a dump
// (tagIndexItems) and the marker of a table whose indexes are complete.

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// tagEntry is one task of a tag index, in the order of its tag link's GSI1
// sort key (sk), which is also the cursor of tasksByTag.
type tagEntry struct {
	sk, taskID, projectID, assigneeID string
	// title is the task's title when the entry carries it (titled).
	title  string
	titled bool
}

// tagEntries reads the indexes of tag in the projects (pus, ULIDs) and
// returns their entries in sort-key order; ok is false when the table has
// no indexes yet or one of them is full (the caller reads the tag links).
func (s *Store) tagEntries(ctx context.Context, tag string, pus []string) (entries []tagEntry, ok bool, err error) {
	if !s.tagIndexed.Load() {
		return nil, false, nil
	}
	keys := make([]key, len(pus))
	for i, pu := range pus {
		keys[i] = tagIndexKey(pu, tag)
	}
	items, err := s.getItems(ctx, keys)
	if err != nil {
		return nil, false, err
	}
	for i, it := range items {
		if it == nil {
			continue
		}
		if _, full := it[attrFull]; full {
			s.fullIndexes.Store(keys[i], true)
			return nil, false, nil
		}
		es, err := indexEntries(it, domain.ProjectIDOf(pus[i]))
		if err != nil {
			return nil, false, err
		}
		entries = append(entries, es...)
	}
	slices.SortFunc(entries, func(a, b tagEntry) int { return strings.Compare(a.sk, b.sk) })
	return entries, true, nil
}

// listed is the task as the entry lists it, nil when it carries no title
// (Tagged.Listed).
func (e tagEntry) listed() *domain.Task {
	if !e.titled {
		return nil
	}
	t := &domain.Task{ID: e.taskID, ProjectID: e.projectID, Title: e.title}
	if e.assigneeID != "" {
		a := e.assigneeID
		t.AssigneeID = &a
	}
	if due := e.sk[len(duePrefix) : len(e.sk)-domain.ULIDLen-1]; due != noDue {
		d, err := domain.ParseDate(due)
		if err != nil {
			return nil // (indexEntries reads what entryValue wrote: cannot happen)
		}
		t.DueDate = &d
	}
	return t
}

// indexEntries are the entries of an index item of project pid, in no
// order (none when it lists no map of tasks).
func indexEntries(it item, pid string) ([]tagEntry, error) {
	m, _ := it[attrTasks].(*types.AttributeValueMemberM)
	if m == nil {
		return nil, nil
	}
	var entries []tagEntry
	for tu, v := range m.Value {
		if tu == keepEntry {
			continue
		}
		sv, isS := v.(*types.AttributeValueMemberS)
		var due, rest, assignee, title string
		found, titled := false, false
		if isS {
			due, rest, found = strings.Cut(sv.Value, "|")
			assignee, title, titled = strings.Cut(rest, "|") // a user id has no '|' (domain.ValidUserID)
		}
		if !found || len(tu) != domain.ULIDLen {
			return nil, domain.Errorf(domain.EINTERNAL, "a tag index entry of project %s is malformed", pid)
		}
		entries = append(entries, tagEntry{sk: duePrefix + due + "#" + tu, taskID: domain.TaskIDOf(tu), projectID: pid,
			assigneeID: assignee, title: title, titled: titled})
	}
	return entries, nil
}

// tagIndexItems builds the tag indexes of the tasks among items (a whole
// table) afresh, with the marker of an indexed table (recount).
func tagIndexItems(items []item, limit int) []item {
	byKey := map[key]map[string]types.AttributeValue{}
	var order []key
	for _, it := range items {
		if str(it, "type") != typeTask {
			continue
		}
		t, err := decodeAs[*domain.Task](it)
		if err != nil {
			continue // the invariant checker reports it
		}
		pu, tu := ulidOf(t.ProjectID), ulidOf(t.ID)
		for _, tag := range t.Tags {
			k := tagIndexKey(pu, tag)
			ix := byKey[k]
			if ix == nil {
				ix = map[string]types.AttributeValue{}
				byKey[k] = ix
				order = append(order, k)
			}
			ix[tu] = &types.AttributeValueMemberS{Value: entryValue(t)}
		}
	}
	out := make([]item, 0, len(order)+1)
	for _, k := range order {
		ix := k.av()
		ix["type"] = &types.AttributeValueMemberS{Value: typeTagIndex}
		n := 0
		for tu, v := range byKey[k] {
			n += entryUnits(tu, v.(*types.AttributeValueMemberS).Value)
		}
		if n > limit {
			ix[attrFull] = &types.AttributeValueMemberBOOL{Value: true}
		} else {
			ix[attrTasks] = &types.AttributeValueMemberM{Value: byKey[k]}
			ix[attrEntries] = &types.AttributeValueMemberN{Value: strconv.Itoa(n)}
		}
		out = append(out, ix)
	}
	return append(out, markerItem())
}

// markerItem is the marker of a table whose tag indexes are complete.
func markerItem() item {
	it := tagIndexedKey.av()
	it["type"] = &types.AttributeValueMemberS{Value: typeMarker}
	return it
}

// DetectTagIndex sets whether the table's tag indexes can be read: it has
// the marker that EnsureTable writes into a new table and recount into a
// rebuilt one. Returns EUNAVAILABLE.
func (s *Store) DetectTagIndex(ctx context.Context) error {
	it, err := s.getOne(ctx, tagIndexedKey)
	if err != nil {
		return err
	}
	s.tagIndexed.Store(it != nil)
	if it == nil {
		s.Log.Warn("this table was written by a version without tag indexes: tasksByTag reads one Query per project; an export and import builds them (docs/operations.md)")
	}
	return nil
}

// markTagIndexed writes the marker of a table whose tag indexes are
// complete (a new, empty table) and reads them from then on.
func (s *Store) markTagIndexed(ctx context.Context) error {
	err := s.batchWrite(ctx, []types.WriteRequest{{PutRequest: &types.PutRequest{Item: markerItem()}}})
	if err == nil {
		s.tagIndexed.Store(true)
	}
	return err
}

// EnsureTagUnits counts the entries of an existing table's tag indexes in
// units once (entryUnits; a version before counted entries, which is less
// where an assignee's id is long, and the next counted no unit for an
// entry's title): when the table has no marker, it reads
// the indexes (one Scan, filtered: a migration, run once), sets each one's
// count, then writes the marker. A new table and a loaded dump (recount)
// count units already. Run it before serving.
func (s *Store) EnsureTagUnits(ctx context.Context) error {
	it, err := s.getOne(ctx, tagUnitsKey)
	if err != nil || it != nil {
		return err
	}
	if sc, ok := s.db.(scanner); ok {
		items, err := scanTypes(ctx, sc, s.table, typeTagIndex)
		if err != nil {
			return err
		}
		n, err := s.setEach(ctx, items, recountUnits, attrEntries)
		if err != nil {
			return err
		}
		s.Log.Info("tag indexes counted in units (once)", "indexes", strconv.Itoa(n))
	}
	return s.markTagUnits(ctx)
}

// recountUnits sets, in place, an index item's count to the units of its
// entries, and reports whether it changed.
func recountUnits(it item) bool {
	m, _ := it[attrTasks].(*types.AttributeValueMemberM)
	if m == nil {
		return false
	}
	units := 0
	for tu, v := range m.Value {
		if sv, ok := v.(*types.AttributeValueMemberS); ok && tu != keepEntry {
			units += entryUnits(tu, sv.Value)
		}
	}
	if numberOf(it, attrEntries) == int64(units) {
		return false
	}
	it[attrEntries] = &types.AttributeValueMemberN{Value: strconv.Itoa(units)}
	return true
}

// markTagUnits writes the marker of a table whose tag indexes count units.
func (s *Store) markTagUnits(ctx context.Context) error {
	return s.batchWrite(ctx, []types.WriteRequest{{PutRequest: &types.PutRequest{Item: tagUnitsMarker()}}})
}

func tagUnitsMarker() item {
	it := tagUnitsKey.av()
	it["type"] = &types.AttributeValueMemberS{Value: typeMarker} // as the tag indexes' own marker
	return it
}
