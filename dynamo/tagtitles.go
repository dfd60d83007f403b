package dynamo

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// tagTitlesBackfill gives each tag index entry written before entries
// carried titles (entryValue) its task's title, when the title fits
// (maxEntryTitle): a page of tasksByTag whose tasks select only what
// entries hold then reads no task item (Tagged.Listed). A joined backfill
// (backfilljoin.go): per index, the tasks of its untitled entries read in
// one BatchGetItem, the entries rewritten in one transaction per
// maxFillParts of them, each on the condition that the entry is still as
// read and its task's title still the one copied.
var tagTitlesBackfill = backfill{name: tagTitlesName, types: []string{typeTagIndex},
	join: untitledEntries, fill: entryTitles, violations: untitledViolations}

// tagTitlesName is tagTitlesBackfill's marker's name.
const tagTitlesName = "tag-entry-titles"

// untitledEntries are the tasks of an index's entries without a title (none
// for a full index, whose entries are not read).
func untitledEntries(it item) []key {
	if _, full := it[attrFull]; full {
		return nil
	}
	m, _ := it[attrTasks].(*types.AttributeValueMemberM)
	if m == nil {
		return nil
	}
	var keys []key
	for _, tu := range slices.Sorted(maps.Keys(m.Value)) {
		if v, ok := m.Value[tu].(*types.AttributeValueMemberS); ok && tu != keepEntry && !titled(v.Value) {
			keys = append(keys, taskKey(tu))
		}
	}
	return keys
}

// entryTitles are the titles to give an index's untitled entries: each
// entry whose task (read) has a title that fits, and whose due date and
// assignee are the entry's, from the entry as read to the entry with the
// title. A task missing, or whose due date or assignee are not its
// entry's, is stale: read before a write that the entry shows already, or
// after one whose own transaction rewrites the entry (then the write's
// condition fails).
func entryTitles(it item, tasks map[key]item) (parts []fillPart, stale bool) {
	m, _ := it[attrTasks].(*types.AttributeValueMemberM)
	for _, k := range untitledEntries(it) {
		raw := tasks[k]
		if raw == nil {
			stale = true // (or deleted: its write takes the entry out)
			continue
		}
		t, err := decodeAs[*domain.Task](raw)
		tu := strings.TrimPrefix(k.PK, taskPK(""))
		was := m.Value[tu].(*types.AttributeValueMemberS).Value
		if err != nil || len(t.Title) > maxEntryTitle {
			continue
		}
		if linkValue(t) != was {
			stale = true
			continue
		}
		parts = append(parts, fillPart{path: entryName(tu), was: &types.AttributeValueMemberS{Value: was},
			value: &types.AttributeValueMemberS{Value: entryValue(t)}, from: k,
			check: item{"title": &types.AttributeValueMemberS{Value: t.Title}}})
	}
	return parts, stale
}

// untitledViolations: every entry of an index (not full) whose task's
// title fits carries it.
func untitledViolations(it plainItem, by func(key) plainItem) []string {
	m, _ := it[attrTasks].(map[string]any)
	if it[attrFull] == true {
		return nil
	}
	var out []string
	for _, tu := range slices.Sorted(maps.Keys(m)) {
		v, _ := m[tu].(string)
		if tu == keepEntry || titled(v) {
			continue
		}
		if task := by(taskKey(tu)); task != nil && len(strOf(task, "title")) <= maxEntryTitle {
			out = append(out, fmt.Sprintf("tag index %s %s: the entry of task %s has no title, its task's %q fits (backfill %s)",
				strOf(it, attrPK), strOf(it, attrSK), tu, strOf(task, "title"), tagTitlesName))
		}
	}
	return out
}

// titled reports whether an entry's value carries its task's title (a
// second '|': entryValue).
func titled(v string) bool { return strings.Count(v, "|") >= 2 }
