package dynamo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// Every key string of the table is built here and nowhere else, and every
// access pattern is a named value here, beside the keys it reads: which
// index, which key attributes, which sort-key range, which order, which cursor
// shape. Arguments are ULIDs and validated user ids or tag names, never raw
// client input.
//
//	item        PK              SK                 GSI1PK                  GSI1SK              GSI2PK            GSI2SK
//	user        USER#<u>        PROFILE
//	project     PROJECT#<p>     PROJECT
//	membership  PROJECT#<p>     MEMBER#<u>         USER#<u>                PROJECT#<p>
//	task        TASK#<t>        TASK               PROJECT#<p>             DUE#<date|~>#<t>    USER#<u>#OPEN|DONE DUE#<date|~>#<t>
//	                                                                                           or UNASSIGNED#PROJECT#<p>
//	            and in GSI4 (GSI4PK, GSI1SK; INCLUDE what a list shows): <p>, DUE#<date|~>#<t>
//	tag link    TASK#<t>        TAG#<name>         TAG#<name>#PROJECT#<p>  DUE#<date|~>#<t>
//	tag index   PROJECT#<p>     TAGS#<name>
//	comment     TASK#<t>        COMMENT#<c>        COMMENTS#PROJECT#<p>    TASK#<t>#COMMENT#<c>
//	            and in GSI3 (GSI3PK, PK; INCLUDE authorId, body, createdAt): <p>, TASK#<t>
//	marker      META            TAGINDEX, TAGUNITS2, CHANGELOG, COPIES, COMMENTINDEX
//	cleanup job CLEANUP         PROJECT#<p> | TASK#<t>
//	idempotency IDEM#<u>#<key>  OP#<mutation field or alias>
//	outbox      OUTBOX#<0..15>  <commit time, fixed width>#<event id>
//	change      CHANGES#<p>     <position, 12 digits>                                          CHANGEEXP#<0..15>  <expiry>  (once it may go)
//	departure   CHANGES#<p>     LEFT#<u>                                                       CHANGEEXP#<0..15>  <expiry>  (once it may go)

// Attribute and index names.
const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	attrGSI2PK = "GSI2PK"
	attrGSI2SK = "GSI2SK"
	attrGSI3PK = "GSI3PK"
	attrGSI4PK = "GSI4PK"

	indexGSI1 = "GSI1"
	indexGSI2 = "GSI2"
	indexGSI3 = "GSI3"
	indexGSI4 = "GSI4"
)

// Sort-key constants and prefixes.
const (
	profileSK     = "PROFILE"
	projectSK     = "PROJECT"
	taskSK        = "TASK"
	memberPrefix  = "MEMBER#"
	commentPrefix = "COMMENT#"
	tagPrefix     = "TAG#"
	duePrefix     = "DUE#"
	projectPrefix = "PROJECT#"
	cleanupPK     = "CLEANUP"
	outboxPrefix  = "OUTBOX#"
	changesPrefix = "CHANGES#"
	leftPrefix    = "LEFT#"
	expiryPrefix  = "CHANGEEXP#"
	markPrefix    = "SYNC#"

	// noDue stands for a missing due date in due-date sort keys. '~' sorts
	// after every digit, so tasks without a due date come last.
	noDue = "~"
	// rangeEnd closes a prefix range: it sorts after every ULID, date and
	// tag character.
	rangeEnd = "~~"
)

// key is an item's primary key.
type key struct{ PK, SK string }

func (k key) av() item {
	return item{attrPK: &types.AttributeValueMemberS{Value: k.PK}, attrSK: &types.AttributeValueMemberS{Value: k.SK}}
}

func keyOf(m item) key { return key{str(m, attrPK), str(m, attrSK)} }

// Primary keys (point reads, writes).
func userPK(u string) string    { return "USER#" + u }
func userKey(u string) key      { return key{userPK(u), profileSK} }
func projectPK(p string) string { return projectPrefix + p }

// syncMarkKey is user u's sync mark of project p (syncmark.go), in the
// user's partition beside their profile.
func syncMarkKey(u, p string) key    { return key{userPK(u), markPrefix + p} }
func projectKey(p string) key        { return key{projectPK(p), projectSK} }
func memberSK(u string) string       { return memberPrefix + u }
func memberKey(p, u string) key      { return key{projectPK(p), memberSK(u)} }
func taskPK(t string) string         { return "TASK#" + t }
func taskKey(t string) key           { return key{taskPK(t), taskSK} }
func commentSK(c string) string      { return commentPrefix + c }
func commentKey(t, c string) key     { return key{taskPK(t), commentSK(c)} }
func tagSK(name string) string       { return tagPrefix + name }
func tagKey(t, name string) key      { return key{taskPK(t), tagSK(name)} }
func cleanupKey(kind, id string) key { return key{cleanupPK, kind + "#" + id} }
func tagIndexKey(p, name string) key { return key{projectPK(p), "TAGS#" + name} }

// The markers of a table, each of a change made once to it:
var (
	tagIndexedKey     = key{"META", "TAGINDEX"}     // its tag indexes are complete (tagindex.go)
	tagUnitsKey       = key{"META", "TAGUNITS2"}    // they count entries in units as entryUnits does (TAGUNITS: before titles)
	copiesKey         = key{"META", "COPIES"}       // its profiles carry the copies of their projects (copies.go)
	changeLogKey      = key{"META", "CHANGELOG"}    // its change logs are complete, with their epoch (changes.go)
	commentIndexedKey = key{"META", "COMMENTINDEX"} // its comments carry their project collection's keys (comment.go)
)

// idemKey is the record of viewer u's key k for the mutation field (or
// alias) op. An alias may be as long as a request's body: one longer than
// maxOpInKey is keyed by its SHA-256 ('~' is in no GraphQL name), so that
// the sort key stays under DynamoDB's 1,024 bytes (the record keeps the
// alias itself, which a replay compares).
func idemKey(u, k, op string) key {
	if len(op) > maxOpInKey {
		sum := sha256.Sum256([]byte(op))
		op = "~" + hex.EncodeToString(sum[:])
	}
	return key{"IDEM#" + u + "#" + k, "OP#" + op}
}

const maxOpInKey = 200

// The change log of a project (changes.go): a partition of its own, one
// entry per object keyed by the position of its last change, and one
// departure item per user removed from the project.
func changesPK(p string) string { return changesPrefix + p }

// positionWidth is the width of a position in an entry's sort key:
// positions sort as numbers up to 10^12 changes of one project.
const positionWidth = 12

func positionSK(pos int64) string       { return fmt.Sprintf("%0*d", positionWidth, pos) }
func changeKey(p string, pos int64) key { return key{changesPK(p), positionSK(pos)} }
func departureKey(p, u string) key      { return key{changesPK(p), leftPrefix + u} }

// positionOf reads a position from an entry's sort key (false for a
// departure item or anything else).
func positionOf(sk string) (int64, bool) {
	if len(sk) != positionWidth {
		return 0, false
	}
	n, err := strconv.ParseInt(sk, 10, 64)
	return n, err == nil && n > 0
}

// The entries of a project's change log after a position and up to
// another (changesPK; positionSK bounds), oldest first: what a sync reads.
var changesOfProject = pattern{keySchema: onTable}

// expiryShards is how many GSI2 partitions the sweep of expired change
// log items reads (changes.go): a busy table's deletions spread over them.
const expiryShards = 16

// expiryPK is the GSI2 partition of an expiring change log item, picked
// from its key (FNV-1a, as outboxShard); expirySK orders it by expiry.
func expiryPK(k key) string {
	return expiryPrefix + strconv.Itoa(int(fnv32(k.PK+"#"+k.SK)%expiryShards))
}
func expirySK(unix int64) string { return fmt.Sprintf("%0*d", positionWidth, unix) }

// The expired items of one sweep partition (expiryPK) before a time
// (expirySK), in GSI2: what the sweep deletes.
var expiredChanges = pattern{keySchema: onGSI2}

// outboxShards is how many partitions the outbox is spread over, so that a
// busy table does not send every mutation's outbox write to one partition
// (about 1,000 writes a second each).
const outboxShards = 16

// outboxTimeLayout is the commit time in an outbox sort key: fixed width,
// so that sort keys order by time.
const outboxTimeLayout = "2006-01-02T15:04:05.000000000Z"

// outboxShard picks an event's outbox partition from its id (FNV-1a).
func outboxShard(eventID string) int { return int(fnv32(eventID) % outboxShards) }

func outboxPK(shard int) string { return outboxPrefix + strconv.Itoa(shard) }

// outboxKey is the key of an event's outbox item: its shard, then its
// commit time and id, so that a shard reads in commit order.
func outboxKey(eventID string, at time.Time) key {
	return key{outboxPK(outboxShard(eventID)), at.UTC().Format(outboxTimeLayout) + "#" + eventID}
}

// keySchema is the primary key of the table or of one of its indexes, and
// an index's projection: every attribute, or (include, names apart by
// spaces) the keys and those attributes only.
type keySchema struct {
	index          string // "" for the table itself (strongly consistent reads)
	pkAttr, skAttr string
	include        string
}

var (
	onTable = keySchema{index: "", pkAttr: attrPK, skAttr: attrSK}
	onGSI1  = keySchema{index: indexGSI1, pkAttr: attrGSI1PK, skAttr: attrGSI1SK}
	onGSI2  = keySchema{index: indexGSI2, pkAttr: attrGSI2PK, skAttr: attrGSI2SK}
	// GSI3, the comments with what a list shows (commentindex.go), sorted
	// by their PK: a thread is contiguous, its comments tie (ordered by SK
	// when read). GSI4, the tasks with what a list shows (tasklisted.go).
	onGSI3 = keySchema{index: indexGSI3, pkAttr: attrGSI3PK, skAttr: attrPK, include: "authorId body createdAt"}
	onGSI4 = keySchema{index: indexGSI4, pkAttr: attrGSI4PK, skAttr: attrGSI1SK, include: "title status dueDate assigneeId tags commentCount"}
)

// indexes are the table's global secondary indexes, as TableDefinition
// creates them. One added here is created on an existing table at its next
// start (EnsureTable, indexes.go); a backfill (backfill.go) gives the
// items written before it its keys.
var indexes = []keySchema{onGSI1, onGSI2, onGSI3, onGSI4}

// backfills give the items written before a change the attributes its
// writes give new items (backfill.go), in the order they run; a name is
// never reused.
var backfills = []backfill{commentsLeanBackfill, tasksLeanBackfill, tagTitlesBackfill, leanItemsGate}

// Pattern 2: a user's memberships, newest project first, in GSI1; the
// membership item (PK projectPK, SK memberSK) also carries these keys.
var projectsOfUser = pattern{keySchema: onGSI1, prefix: projectPrefix, desc: true, cursor: validULIDCursor(projectPrefix)}

func userProjectsPK(u string) string { return userPK(u) }
func userProjectsSK(p string) string { return projectPrefix + p }

// A project's memberships, by user id, in the project's own partition
// (projectPK): `project { members }` is one Query.
var membersOfProject = pattern{keySchema: onTable, prefix: memberPrefix}

// Pattern 3: a project's tasks by due date (dueSK), no due date last, in
// GSI1; the cleanup of a deleted project finds its tasks here too.
var tasksOfProject = pattern{keySchema: onGSI1, prefix: duePrefix, cursor: validDueCursor}

func projectTasksPK(p string) string { return projectPK(p) }

// Pattern 3 with what a list shows, in GSI4 (leanTasksPK, the same sort
// keys and cursors): read once its backfill is done (tasklisted.go).
var tasksOfProjectListed = pattern{keySchema: onGSI4, prefix: duePrefix, cursor: validDueCursor}

func leanTasksPK(p string) string { return p }

// Pattern 4: a user's assigned tasks by due date, in GSI2, one partition
// for open tasks and one for done ones (merged). Pattern 7, overdue tasks,
// is the open partition bounded by dueBefore(asOf). Unassigned tasks sit in
// their project's unassignedPK partition.
var tasksOfAssignee = pattern{keySchema: onGSI2, prefix: duePrefix, cursor: validDueCursor}

// assignedPK is the GSI2 partition of a user's open (TODO, IN_PROGRESS) or
// DONE tasks. Splitting by openness makes "overdue" a pure key condition.
func assignedPK(u string, open bool) string {
	if open {
		return userPK(u) + "#OPEN"
	}
	return userPK(u) + "#DONE"
}

// unassignedPK is the GSI2 partition of a project's unassigned tasks.
func unassignedPK(p string) string { return "UNASSIGNED#" + projectPK(p) }

// dueBefore is the bound below which lie the due-date keys of dates before d.
func dueBefore(d domain.Date) string { return duePrefix + d.String() }

// Pattern 5: a task's comments, oldest first, in the task's own partition
// (taskPK, SK commentSK).
var commentsOfTask = pattern{keySchema: onTable, prefix: commentPrefix, cursor: validULIDCursor(commentPrefix)}

// The comments of a project's tasks in GSI1 (projectCommentsPK), each
// task's thread contiguous and oldest first (projectCommentSK): the first
// comments of many tasks of one project are one Query of the range between
// the first and the last task's threads (comment.go).
var commentsOfProjectTasks = pattern{keySchema: onGSI1}

func projectCommentsPK(p string) string { return "COMMENTS#" + projectPK(p) }

// The comments of a project's tasks in GSI3 (leanCommentsPK), by task
// (their PK), with what a list shows: read once its backfill is done.
var leanCommentsOfProjectTasks = pattern{keySchema: onGSI3}

// leanCommentsPK and leanTasksPK are the project's ULID alone: GSI3 and
// GSI4 hold one type of item each, so a prefix would tell apart nothing,
// and each byte is in every entry read.
func leanCommentsPK(p string) string { return p }

// projectCommentSK is a comment's sort key in its project's collection;
// threadOf(t) begins the sort keys of task t's comments.
func projectCommentSK(t, c string) string { return threadOf(t) + c }
func threadOf(t string) string            { return taskPK(t) + "#" + commentPrefix }

// taskOfProjectCommentSK returns the task ULID of a comment's sort key in
// its project's collection.
func taskOfProjectCommentSK(sk string) (string, bool) {
	rest, ok := strings.CutPrefix(sk, "TASK#")
	if !ok || len(rest) < domain.ULIDLen {
		return "", false
	}
	return domain.ParseULID(rest[:domain.ULIDLen])
}

// Pattern 6: the tasks with a tag in one project, by due date, in GSI1; a
// tag link item (PK taskPK, SK tagSK) carries these keys. A viewer's list
// merges one partition per project of theirs.
var tasksByTag = pattern{keySchema: onGSI1, prefix: duePrefix, cursor: validDueCursor}

func tagTasksPK(name, p string) string { return tagPrefix + name + "#" + projectPrefix + p }

// The pending cleanup jobs: the whole cleanupPK partition.
var cleanupJobs = pattern{keySchema: onTable}

// The pending jobs that copy changed profiles into change logs
// (changeprofile.go): cleanupKey(cleanupProfile, u) of each user u.
var pendingProfileJobs = pattern{keySchema: onTable, prefix: cleanupProfile + "#"}

// The outbox items of one shard (outboxPK) committed before a time
// (outboxBefore), oldest first: the events the sweep publishes.
var outboxPending = pattern{keySchema: onTable}

// outboxBefore bounds the sort keys of outbox items committed before t.
func outboxBefore(t time.Time) string { return t.UTC().Format(outboxTimeLayout) }

// Every item of one partition of the table (a deleted task's or project's,
// for the cleanup).
var wholePartition = pattern{keySchema: onTable}

// dueSK orders tasks by due date, then by id (ids sort in creation order);
// tasks without a due date sort last.
func dueSK(due *domain.Date, t string) string {
	d := noDue
	if due != nil {
		d = due.String()
	}
	return duePrefix + d + "#" + t
}

// taskOfDueSK returns the task ULID at the end of a due-date sort key.
func taskOfDueSK(sk string) (string, bool) {
	if len(sk) < len(duePrefix)+domain.ULIDLen+2 || sk[:len(duePrefix)] != duePrefix {
		return "", false
	}
	rest := sk[len(duePrefix):]
	date, t := rest[:len(rest)-domain.ULIDLen-1], rest[len(rest)-domain.ULIDLen:]
	if rest[len(rest)-domain.ULIDLen-1] != '#' {
		return "", false
	}
	if date != noDue {
		if _, err := domain.ParseDate(date); err != nil {
			return "", false
		}
	}
	return domain.ParseULID(t)
}

// validDueCursor checks the sort key of a cursor of a due-date list.
func validDueCursor(sk string) bool { _, ok := taskOfDueSK(sk); return ok }

// taskIndexKeys are a task's index keys: GSI1 under its project by due
// date; GSI2 under its assignee's open or done partition, or, unassigned,
// under its project's. (A sparse GSI2, with no keys on unassigned tasks,
// would be cheaper, but the embedded store corrupts an index when an item
// loses its index keys; see docs/design.md.)
func taskIndexKeys(t *domain.Task) (gsi1pk, gsi1sk, gsi2pk, gsi2sk string) {
	tu, pu := ulidOf(t.ID), ulidOf(t.ProjectID)
	gsi1pk, gsi1sk = projectTasksPK(pu), dueSK(t.DueDate, tu)
	gsi2pk, gsi2sk = unassignedPK(pu), gsi1sk
	if t.AssigneeID != nil {
		gsi2pk = assignedPK(*t.AssigneeID, t.Status != domain.StatusDone)
	}
	return gsi1pk, gsi1sk, gsi2pk, gsi2sk
}

// inKeys returns what a task's or a comment's item repeats of its keys, by
// attribute (leanitems.go): a task's id and its project's (GSI1PK, or GSI4PK
// in a GSI4 entry; none when neither was read), a comment's id and its task's.
func inKeys(it item) (names, values [2]string) {
	t, ok := strings.CutPrefix(str(it, attrPK), taskPK(""))
	switch sk := str(it, attrSK); {
	case !ok || t == "":
	case sk == taskSK:
		names[0], values[0] = "id", domain.TaskIDOf(t)
		p, ok := strings.CutPrefix(str(it, attrGSI1PK), projectPrefix)
		if !ok {
			p, ok = domain.ParseULID(str(it, attrGSI4PK))
		}
		if ok && p != "" {
			names[1], values[1] = "projectId", domain.ProjectIDOf(p)
		}
	case strings.HasPrefix(sk, commentPrefix):
		names, values = [2]string{"id", "taskId"}, [2]string{domain.CommentIDOf(t, sk[len(commentPrefix):]), domain.TaskIDOf(t)}
	}
	return names, values
}
