package dynamo

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// worstSize is the most any item a user's input can grow may hold, with
// room to spare under DynamoDB's 400 KB (409,600 bytes).
const worstSize = 300 * 1024

// TestEveryItemAUserCanGrowStaysWellUnder400KB builds each kind of item at
// its worst, with the store's own mappings: every id, name, text, tag and
// list at its limit, in four-byte characters where input allows them (a
// user id of 128, a name of 200, a text of 10,000), every count at its cap
// (MembershipCap copies, MaxMembers marks, CommentCap comments,
// TagIndexCap units); a task and a comment as stored (lean, leanitems.go).
// Each stays under worstSize; the figures are those of
// docs/security.md, "Stored items" (-v).
func TestEveryItemAUserCanGrowStaysWellUnder400KB(t *testing.T) {
	var (
		uid   = strings.Repeat("𠀀", 128)                                  // 512 bytes
		name  = strings.Repeat("😀", 200)                                  // 800
		text  = strings.Repeat("😀", 10_000)                               // 40,000
		email = strings.Repeat("😀", 126) + "@" + strings.Repeat("😀", 127) // 254 characters
		now   = time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, time.UTC)
		ids   = newIDGen()
	)
	due := domain.DateOf(now)
	var tags []string
	for i := range domain.MaxTagsOnTask {
		tags = append(tags, fmt.Sprintf("%02d", i)+strings.Repeat("t", 48))
	}
	p := &domain.Project{ID: domain.ProjectIDOf(ids.next(now)), Name: name, Description: &text, OwnerID: uid, CreatedAt: now,
		TaskCounts: domain.TaskCounts{Todo: 1 << 40, InProgress: 1 << 40, Done: 1 << 40}, Seq: 1 << 40, ProjectSeq: 1 << 40}
	task := &domain.Task{ID: domain.TaskIDOf(ids.next(now)), ProjectID: p.ID, Title: name, Description: &text, Status: domain.StatusInProgress,
		DueDate: &due, AssigneeID: &uid, Tags: tags, CreatedAt: now, UpdatedAt: now, Version: 1 << 40, CommentCount: DefaultCommentCap}
	comment := &domain.Comment{ID: domain.CommentIDOf(ulidOf(task.ID), ids.next(now)), TaskID: task.ID, AuthorID: uid, Body: text, CreatedAt: now}
	u := &domain.User{ID: uid, Name: name, Email: &email, CreatedAt: now, Projects: map[string]string{}}
	for range DefaultMembershipCap {
		u.Projects[domain.ProjectIDOf(ids.next(now))] = copyOf(strings.Repeat("😀", copyNameBytes/4)) // the longest a copy holds
	}
	var gone changeItem
	for range DefaultCommentCap {
		gone.Comments = append(gone.Comments, domain.CommentIDOf(ulidOf(task.ID), ids.next(now)))
		gone.CommentsBorn = append(gone.CommentsBorn, 999_999_999_999)
	}
	k := changeKey(ulidOf(p.ID), 999_999_999_999)
	gone.PK, gone.SK, gone.Type, gone.ID, gone.Gone, gone.At, gone.Born = k.PK, k.SK, typeChange, task.ID, true, fmtTime(now), 999_999_999_999
	var ts Store
	ts.expire(&gone.GSI2PK, &gone.GSI2SK, &gone.ExpiresAt, k, now)
	member := changeItem{PK: k.PK, SK: k.SK, Type: typeChange, ID: uid, At: fmtTime(now), Since: fmtTime(now), Born: 999_999_999_999}
	left := leftItem{PK: k.PK, SK: leftPrefix + uid, Type: typeLeft, User: uid, At: fmtTime(now), Pos: 999_999_999_999}
	ts.expire(&left.GSI2PK, &left.GSI2SK, &left.ExpiresAt, k, now)
	alias := strings.Repeat("a", 64<<10) // a request's body holds no longer one
	ik := idemKey(uid, strings.Repeat("K", maxIdemKeyLen), alias)
	idem := idemItem{PK: ik.PK, SK: ik.SK, Type: typeIdem, Op: alias, Digest: strings.Repeat("d", 64), Result: comment.ID, Project: p.ID,
		ExpiresAt: now.Unix()}
	ev := func(kind domain.EventKind, tk *domain.Task, c *domain.Comment, pr *domain.Project) *domain.Event {
		e := changeEvent(kind, p.ID, uid, uid, now, tk, c, pr)
		e.ID = strings.Repeat("e", 32)
		return e
	}

	items := []struct {
		what string
		it   item
	}{
		{fmt.Sprintf("profile: %d copies of %d-byte names, a 1,016-byte email", DefaultMembershipCap, copyNameBytes), userToItem(u, 1<<40)},
		{"project: name, description, counters", withMarks(projectToItem(p, 1<<40), MaxMembers, uid)},
		{"membership", withEntry(memberToItem(&domain.Member{ProjectID: p.ID, UserID: uid, Role: domain.RoleMember, JoinedAt: now}), entryAt{1 << 40, 1 << 40})},
		{"task: title, description, 20 tags, assignee", lean(withEntry(taskToItem(task), entryAt{1 << 40, 1 << 40}))},
		{"tag link", tagLinkItem(task, tags[0])},
		{fmt.Sprintf("tag index at %d units", DefaultTagIndexCap), fullIndex(p, tags[0])},
		{"comment", lean(withEntry(indexComment(commentToItem(comment), ulidOf(p.ID)), entryAt{1 << 40, 1 << 40}))},
		{fmt.Sprintf("change entry: a deleted task's, %d comments", DefaultCommentCap), marshal(gone)},
		{"change entry: a member's", marshal(member)},
		{"departure", marshal(left)},
		{"idempotency record: a 64 KiB alias", marshal(idem)},
		{"outbox: COMMENT_ADDED (task and comment)", outboxToItem(ev(domain.EventCommentAdded, task, comment, nil), now)},
		{"outbox: MEMBER_ADDED (project)", outboxToItem(ev(domain.EventMemberAdded, nil, nil, p), now)},
		{"cleanup job", cleanupTaskItem(ulidOf(task.ID), ulidOf(p.ID), now)},
		{"sync mark", syncMarkItem(uid, ulidOf(p.ID), 1<<40)},
	}
	var report []string
	for _, c := range items {
		size := client.ItemSize(c.it)
		report = append(report, fmt.Sprintf("| %s | %d |", c.what, size))
		if size > worstSize {
			t.Errorf("%s: %d bytes, more than %d", c.what, size, worstSize)
		}
	}
	t.Logf("\n| item at its worst | bytes |\n| --- | --: |\n%s", strings.Join(report, "\n"))
}

// withMarks is a project item whose set of marked members (sync marks,
// syncmark.go) holds n user ids like uid.
func withMarks(it item, n int, uid string) item {
	var set []string
	for i := range n {
		set = append(set, uid[:len(uid)-4*3]+strconv.Itoa(100+i))
	}
	it[attrMarked] = &types.AttributeValueMemberSS{Value: set}
	return it
}

// fullIndex is a tag index at its cap of units, every entry filling its
// unit to the byte (the most bytes a unit holds: 26 + 101 + 1, an assignee
// of 90 bytes).
func fullIndex(p *domain.Project, tag string) item {
	uid := strings.Repeat("u", 90)
	m := map[string]types.AttributeValue{}
	ids, units := newIDGen(), 0
	for {
		tu := ids.next(time.Now())
		v := "2026-12-31|" + uid
		if units+entryUnits(tu, v) > DefaultTagIndexCap {
			break
		}
		units += entryUnits(tu, v)
		m[tu] = &types.AttributeValueMemberS{Value: v}
	}
	it := tagIndexKey(ulidOf(p.ID), tag).av()
	it["type"] = &types.AttributeValueMemberS{Value: typeTagIndex}
	it[attrTasks] = &types.AttributeValueMemberM{Value: m}
	it[attrEntries] = &types.AttributeValueMemberN{Value: strconv.Itoa(units)}
	return it
}
