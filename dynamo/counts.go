package dynamo

import (
	"bytes"
	"context"
	"github.com/taskgraph/taskgraph/domain"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Counters. A project's item counts its tasks by status (todoCount,
// inProgressCount, doneCount; the total is their sum), a task's item its
// comments (commentCount). Each counter changes in the very transaction
// that changes what it counts, so it is exact whenever that transaction's
// other writes are visible, and a failed or replayed mutation counts
// nothing:
//
//   - createTask, deleteTask and a status change (updateTask) ADD to the
//     project's counters (an atomic add needs no read) and to its rev, so
//     that a whole write of the project read before them (updateProject)
//     fails its rev condition and reads again instead of writing old
//     counts back;
//   - addComment and deleteComment set the task's count from the value
//     read, on the condition that it is still that value (a versioned
//     write: the task snapshot of their event then shows the exact count);
//   - a whole write of a task (updateTask, a member's removal unassigning
//     it) is conditioned on the count read as well as the version, since a
//     comment does not change the version (taskAt);
//   - deleting a task deletes its count with its item, and removes it from
//     the project's counts in the same transaction; deleting a project
//     deletes its counts with its item. What the cleanup worker deletes
//     later (comments of a deleted task, tasks of a deleted project) is
//     counted nowhere: nothing reaches it any more.
//
// Counters are read with their items: a project's with the project (read
// anyway for visibility), a task's with the task. A table dumped and
// loaded, or written by a version without counters, is counted afresh from
// its items when loaded (recount).

// The counter attributes.
const (
	attrTodoCount       = "todoCount"
	attrInProgressCount = "inProgressCount"
	attrDoneCount       = "doneCount"
	attrCommentCount    = "commentCount"
)

// statusCountAttr is the project attribute that counts tasks of status st.
func statusCountAttr(st domain.TaskStatus) string {
	switch st {
	case domain.StatusInProgress:
		return attrInProgressCount
	case domain.StatusDone:
		return attrDoneCount
	}
	return attrTodoCount
}

// countTasks adds to t the update of a project's task counters by delta
// (status → change; zero changes are left out), on the condition that the
// project exists (onFail otherwise). With no change at all it is only that
// check. It is the transaction's action on the project (onProject): with
// a change log, it also takes the log's positions, and a change of counts
// is a change of the project itself (logProject).
func (s *Store) countTasks(t *txn, pu string, delta map[domain.TaskStatus]int, onFail error) {
	var upd expression.UpdateBuilder
	changed := false
	for _, st := range []domain.TaskStatus{domain.StatusTodo, domain.StatusInProgress, domain.StatusDone} {
		if d := delta[st]; d != 0 {
			upd, changed = upd.Add(expression.Name(statusCountAttr(st)), expression.Value(d)), true
		}
	}
	if !changed {
		t.onProject(pu, exists(), nil, onFail)
		return
	}
	t.logProject()
	t.onProject(pu, exists(), ptr(upd.Add(expression.Name("rev"), expression.Value(1))), onFail)
}

// countComments adds to t the change of a task's comment count from the
// value read to to, on the condition that the task still exists with the
// count read (errRetry otherwise: the caller reads again).
func (s *Store) countComments(t *txn, task *domain.Task, to int) {
	tu := ulidOf(task.ID)
	set := expression.Set(expression.Name(attrCommentCount), expression.Value(to))
	cond := exists().And(expression.Name(attrCommentCount).Equal(expression.Value(task.CommentCount)))
	t.update(s.table, taskKey(tu), set, &cond, errRetry)
}

// DefaultCommentCap is Store.CommentCap's default: how many comments one
// task may have. A deleted task's gone entry in the change log lists its
// comments (about 70 bytes each: the id and where it was born), so it
// stays under 80 KB, and a sync page's tombstones under first × 1,001
// (docs/security.md, "Stored items").
const DefaultCommentCap = 1000

func (s *Store) commentCap() int {
	if s.CommentCap > 0 {
		return s.CommentCap
	}
	return DefaultCommentCap
}

// roomForComment refuses a comment on a task that has as many as the cap
// admits (EINVALID), before any write: addComment's count is conditioned
// on the value read (countComments), so the cap holds whatever runs beside
// it.
func (s *Store) roomForComment(task *domain.Task) error {
	if task.CommentCount >= s.commentCap() {
		return domain.Errorf(domain.EINVALID, "taskId: a task has at most %d comments", s.commentCap())
	}
	return nil
}

// taskAt is the condition of a whole write of a task read at version
// with commentCount comments: neither changed since.
func taskAt(version, commentCount int) *expression.ConditionBuilder {
	return ptr(expression.Name("version").Equal(expression.Value(version)).
		And(expression.Name(attrCommentCount).Equal(expression.Value(commentCount))))
}

// recount sets the counters of every project and task item among items,
// in place, to what the items themselves hold: a project counts the task
// items of its id by status, a task the comment items of its id. Items is
// a whole table (a dump): loading one makes its counters right whatever
// wrote it, including a version without counters. Its lean items (a
// snapshot's, or a dump's of lean items) are made whole first, in place
// (whole, leanitems.go), as the store's client makes the items it reads.
//
// It returns items without their tag indexes and marker, followed by the
// tag indexes built afresh from the tasks, and the marker (tagIndexItems),
// then the change log, kept or built afresh (changeLogItems, which may set
// the positions of the objects and projects in place).
func (s *Store) recount(items []item) []item {
	wholeAll(items)
	tasks := map[string]*domain.TaskCounts{} // project id → counts
	comments := map[string]int{}             // task id → count
	for _, it := range items {
		switch str(it, "type") {
		case typeTask:
			pid := str(it, "projectId")
			if tasks[pid] == nil {
				tasks[pid] = &domain.TaskCounts{}
			}
			tasks[pid].Add(domain.TaskStatus(str(it, "status")), 1)
		case typeComment:
			comments[str(it, "taskId")]++
		}
	}
	n := func(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
	for _, it := range items {
		switch str(it, "type") {
		case typeProject:
			delete(it, attrMarked) // sync marks are dropped with every load: its seqs may be new
			c := tasks[str(it, "id")]
			if c == nil {
				c = &domain.TaskCounts{}
			}
			it[attrTodoCount], it[attrInProgressCount], it[attrDoneCount] = n(c.Todo), n(c.InProgress), n(c.Done)
		case typeTask:
			it[attrCommentCount] = n(comments[str(it, "id")])
		}
	}
	indexComments(items)          // the comments' keys in their project's collection (commentindex.go)
	profileCopies(items)          // the profiles' copies of their projects, from the memberships (copies.go)
	marks := backfillItems(items) // what the backfills give a table's items (backfill.go)
	log, epoch := changeLogItems(items)
	s.setChangeEpoch(epoch)
	kept := slices.DeleteFunc(slices.Clone(items), rebuilt)
	kept = append(append(append(kept, tagIndexItems(kept, s.tagIndexCap())...), log...), marks...)
	return append(kept, copiesMarker(), commentIndexMarker(), tagUnitsMarker())
}

// rebuilt reports whether recount builds the item afresh (a tag index or
// the marker), or keeps or builds it with the change log (changeLogItems),
// or drops it (a sync mark: a sync reads the project instead).
func rebuilt(it item) bool {
	switch str(it, "type") {
	case typeTagIndex, typeMarker, typeChange, typeLeft, typeChangeMarker, typeCopiesMarker, typeCommentIndexMarker, typeSyncMark, typeBackfillMarker:
		return true
	}
	return false
}

// Recount counts the whole table's counters afresh from its items
// (recount) and writes back the project and task items whose counters were
// off, returning how many it wrote. It scans the table and writes whole
// items: only for a table nothing else writes to meanwhile (the embedded
// store once its journal is replayed at start, whose records a version
// without counters may have written). Returns EUNAVAILABLE, EINTERNAL.
func (s *Store) Recount(ctx context.Context) (int, error) {
	var buf bytes.Buffer
	if _, err := s.Export(ctx, &buf); err != nil {
		return 0, err
	}
	items, err := ReadDump(&buf)
	if err != nil {
		return 0, domain.Errorf(domain.EINTERNAL, "reading the table back: %v", err)
	}
	counters := func(it item) string {
		var b strings.Builder
		for _, a := range []string{attrTodoCount, attrInProgressCount, attrDoneCount, attrCommentCount, attrSeq, attrProjectSeq, attrSyncSeq, attrGSI1PK, attrGSI1SK, attrGSI3PK} {
			switch v := it[a].(type) {
			case *types.AttributeValueMemberN:
				b.WriteString(v.Value)
			case *types.AttributeValueMemberS: // the keys indexComments and the backfills give
				b.WriteString(v.Value)
			}
			b.WriteByte('/')
		}
		return b.String()
	}
	before := map[key]string{}
	old := map[key]item{}
	for _, it := range items {
		if rebuilt(it) {
			old[keyOf(it)] = it
		} else {
			before[keyOf(it)] = counters(it)
		}
	}
	var reqs []types.WriteRequest
	for _, it := range s.recount(items) {
		k := keyOf(it)
		if rebuilt(it) {
			if o, ok := old[k]; !ok || !reflect.DeepEqual(o, it) {
				reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
			}
			delete(old, k)
		} else if counters(it) != before[k] {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
	}
	for k := range old { // an index of tags no task has any more
		reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k.av()}})
	}
	err = s.batchWrite(ctx, reqs)
	if err == nil {
		s.tagIndexed.Store(true)
		s.commentIndexed.Store(true)
		s.noteBackfills()
	}
	return len(reqs), err
}
