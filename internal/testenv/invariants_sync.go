package testenv

import (
	"slices"
	"strconv"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// The change logs and sync marks in the whole-table check (CheckTable).

// syncMark checks a sync mark (dynamo/syncmark.go): a mark of user u of
// project p at seq n is true only while p exists at seq n and lists u
// among the users who hold marks of it (so that its next change, which
// needs none, deletes the mark first).
func (c *checker) syncMark(it map[string]any) {
	u, p, ok := dynamo.SyncMarkOf(str(it, "PK"), str(it, "SK"))
	if !ok {
		c.violate("sync mark with a key of no mark: %s %s", str(it, "PK"), str(it, "SK"))
		return
	}
	proj := c.item(dynamo.ProjectItemKey(p))
	switch {
	case proj == nil:
		c.violate("sync mark of %s: its project %s does not exist", u, p)
	case str(proj, "seq") != str(it, "seq"):
		c.violate("sync mark of %s: project %s at seq %s, the mark at %s", u, p, str(proj, "seq"), str(it, "seq"))
	default:
		marked, _ := proj["marked"].([]string)
		if !slices.Contains(marked, u) {
			c.violate("sync mark of %s: project %s lists %v as marked", u, p, marked)
		}
	}
}

// changeLog checks the change logs of a table with their marker (see
// CheckTable): the projects' positions, each object's live entry, and
// each item of the logs.
func (c *checker) changeLog(items []map[string]any) {
	if c.item(dynamo.ChangeLogKey()) == nil {
		return
	}
	seqs, taskOf := c.logPositions(items)
	named, live := c.liveEntries(items, seqs, taskOf)
	for _, it := range items {
		if typ := str(it, "type"); typ == "CHANGE" || typ == "LEFT" {
			c.logItem(it, seqs, named, live)
		}
	}
}

// num reads a number attribute (0: none).
func num(it map[string]any, attr string) int64 {
	n, _ := strconv.ParseInt(str(it, attr), 10, 64)
	return n
}

// logPositions checks each project's positions and returns its seq, and
// each task's project.
func (c *checker) logPositions(items []map[string]any) (seqs map[string]int64, taskOf map[string]string) {
	seqs = map[string]int64{}    // project id → seq
	taskOf = map[string]string{} // task id → project id
	for _, it := range items {
		switch str(it, "type") {
		case "PROJECT":
			seq, pseq := num(it, "seq"), num(it, "projectSeq")
			if seq <= 0 || pseq <= 0 || pseq > seq {
				c.violate("project %s: seq %v, projectSeq %v", str(it, "id"), it["seq"], it["projectSeq"])
			}
			seqs[str(it, "id")] = seq
		case "TASK":
			taskOf[str(it, "id")] = str(it, "projectId")
		}
	}
	return seqs, taskOf
}

// liveEntries checks that each member, task and comment has its live
// entry at the position its item records, and returns the entries the
// objects name (entry key → object id) and where each object's lives
// (project id → object id → position).
func (c *checker) liveEntries(items []map[string]any, seqs map[string]int64, taskOf map[string]string) (map[[2]string]string, map[string]map[string]int64) {
	named := map[[2]string]string{}
	live := map[string]map[string]int64{}
	for _, it := range items {
		var pid, id, since string
		switch str(it, "type") {
		case "MEMBER":
			pid, id, since = str(it, "projectId"), str(it, "userId"), str(it, "joinedAt")
		case "TASK":
			pid, id = str(it, "projectId"), str(it, "id")
		case "COMMENT":
			pid, id = taskOf[str(it, "taskId")], str(it, "id")
		default:
			continue
		}
		seq, ok := seqs[pid]
		if !ok {
			continue // an orphan: reported above
		}
		pos := num(it, "syncSeq")
		e := c.item(dynamo.ChangeItemKey(pid, pos))
		switch {
		case pos <= 0 || pos > seq:
			c.violate("%s in %s: syncSeq %v, its project's seq %d", id, pid, it["syncSeq"], seq)
		case e == nil || str(e, "id") != id || e["gone"] != nil:
			c.violate("%s in %s: no live entry of it at its syncSeq %d (%v)", id, pid, pos, e)
		case since != "" && str(e, "since") != since:
			c.violate("member %s of %s: entry since %q, joined %q", id, pid, str(e, "since"), since)
		case num(it, "born") <= 0 || num(it, "born") > pos || num(e, "born") != num(it, "born"):
			c.violate("%s in %s: born %v, its entry's %v, at %d", id, pid, it["born"], e["born"], pos)
		default:
			named[pair(dynamo.ChangeItemKey(pid, pos))] = id
			if live[pid] == nil {
				live[pid] = map[string]int64{}
			}
			live[pid][id] = pos
		}
	}
	return named, live
}

// expiring checks that an item of a change log that may go has its expiry
// and the sweep's GSI2 keys.
func (c *checker) expiring(it map[string]any, what string) {
	exp := num(it, "expiresAt")
	g2pk, g2sk := dynamo.ExpiryIndexKeys(str(it, "PK"), str(it, "SK"), exp)
	if exp <= 0 || str(it, "GSI2PK") != g2pk || str(it, "GSI2SK") != g2sk {
		c.violate("%s %s %s: expiresAt %v, GSI2 %q %q; want an expiry and %q %q", what, str(it, "PK"), str(it, "SK"),
			it["expiresAt"], str(it, "GSI2PK"), str(it, "GSI2SK"), g2pk, g2sk)
	}
}

// logItem checks one item of a change log (an entry or a departure)
// against its project's seq and the live entries the objects name.
func (c *checker) logItem(it map[string]any, seqs map[string]int64, named map[[2]string]string, live map[string]map[string]int64) {
	typ := str(it, "type")
	k := pair(str(it, "PK"), str(it, "SK"))
	pid, pos, isEntry := dynamo.ChangeLogOf(k[0], k[1])
	seq, exists := seqs[pid]
	switch {
	case pid == "" || isEntry != (typ == "CHANGE"):
		c.violate("change log item %s %s of type %s: not a key of the change log", k[0], k[1], typ)
		return
	case !exists: // a deleted project's log: it waits for its expiry
		c.expiring(it, "an item of a deleted project's log")
		return
	case typ == "LEFT":
		if wpk, wsk := dynamo.DepartureItemKey(pid, str(it, "userId")); wpk != k[0] || wsk != k[1] || num(it, "pos") <= 0 || num(it, "pos") > seq {
			c.violate("departure %s %s of user %q at %v", k[0], k[1], str(it, "userId"), it["pos"])
		}
		c.expiring(it, "departure")
		return
	case pos > seq:
		c.violate("entry %s %s lies beyond its project's seq %d", k[0], k[1], seq)
	}
	id := str(it, "id")
	if it["gone"] == nil {
		if named[k] != id {
			c.violate("live entry %s %s of %q, which no object of the project records (%q)", k[0], k[1], id, named[k])
		}
		return
	}
	c.expiring(it, "gone entry")
	if at, ok := live[pid][id]; ok && at < pos {
		c.violate("gone entry %s %s of %q, which lives on at %d", k[0], k[1], id, at)
	}
	for _, raw := range listOf(it["comments"]) {
		if of, err := domain.ParseCommentID(raw); err != nil || of != id {
			c.violate("gone entry %s %s of task %s lists %q, no comment of it", k[0], k[1], id, raw)
		}
	}
	if len(listOf(it["comments"])) != len(listOf(it["commentsBorn"])) {
		c.violate("gone entry %s %s: %d comments, %d born positions", k[0], k[1], len(listOf(it["comments"])), len(listOf(it["commentsBorn"])))
	}
}

// listOf returns a list attribute's strings.
func listOf(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
