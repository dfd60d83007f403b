package dynamo

// The change log of a dump: kept when it is in step with its objects,
// else built afresh.

import (
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// typeChangeMarker is the type of the marker of complete change logs.
const typeChangeMarker = "CHANGELOG"

// changeLogItems returns the change log items of items, a whole table (a
// dump): as they are when they are complete and in step with the objects
// (a dump of this version: positions, and the clients' tokens, survive an
// export and import or a restart of the embedded store), else built afresh
// with a new epoch (a dump of a version without the change log, or one
// whose journal such a version wrote): every object of an existing project
// gets an entry of its own, members first, then tasks, then comments, and
// the objects' and projects' positions are set in place.
func changeLogItems(items []item) (log []item, epoch string) {
	if log, epoch, ok := changeLogInStep(items); ok {
		return log, epoch
	}
	fresh := true // nothing to log: the marker of a new table
	for _, it := range items {
		if t := str(it, "type"); t == typeProject || t == typeMember || t == typeTask || t == typeComment {
			fresh = false
			break
		}
	}
	if fresh {
		m := changeLogMarker(newTableEpoch)
		return []item{m}, newTableEpoch
	}
	projects := map[string]item{} // ULID → item
	var members, tasks, comments []item
	taskProject := map[string]string{} // task id → project ULID
	for _, it := range items {
		switch str(it, "type") {
		case typeProject:
			projects[ulidOf(str(it, "id"))] = it
		case typeMember:
			members = append(members, it)
		case typeTask:
			tasks = append(tasks, it)
			taskProject[str(it, "id")] = ulidOf(str(it, "projectId"))
		case typeComment:
			comments = append(comments, it)
		}
	}
	seq := map[string]int64{}
	byID := func(attr string) func(a, b item) int {
		return func(a, b item) int { return compareStrings(str(a, attr), str(b, attr)) }
	}
	add := func(pu string, obj item, id, at, since string) {
		if projects[pu] == nil {
			delete(obj, attrSyncSeq)
			delete(obj, attrBorn)
			return
		}
		seq[pu]++
		k := changeKey(pu, seq[pu])
		log = append(log, marshal(changeItem{PK: k.PK, SK: k.SK, Type: typeChange, ID: id, At: at, Since: since, Born: seq[pu]}))
		withEntry(obj, entryAt{pos: seq[pu], born: seq[pu]})
	}
	slices.SortFunc(members, byID("userId"))
	for _, m := range members {
		delete(m, attrProfileRev)
		add(ulidOf(str(m, "projectId")), m, str(m, "userId"), str(m, "joinedAt"), str(m, "joinedAt"))
	}
	slices.SortFunc(tasks, byID("id"))
	for _, t := range tasks {
		add(ulidOf(str(t, "projectId")), t, str(t, "id"), str(t, "updatedAt"), "")
	}
	slices.SortFunc(comments, byID("id"))
	for _, c := range comments {
		add(taskProject[str(c, "taskId")], c, str(c, "id"), str(c, "createdAt"), "")
	}
	for pu, p := range projects {
		n := &types.AttributeValueMemberN{Value: strconv.FormatInt(seq[pu], 10)}
		p[attrSeq], p[attrProjectSeq] = n, n
	}
	m := changeLogMarker("")
	return append(log, m), str(m, "epoch")
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// changeLogInStep returns the change log items of items (a whole table)
// and their epoch when the table has the marker and every object of an
// existing project has an entry of its own at the position it records,
// below its project's seq.
func changeLogInStep(items []item) (log []item, epoch string, ok bool) {
	projects := map[string]int64{} // ULID → seq
	entries := map[key]item{}
	taskProject := map[string]string{}
	for _, it := range items {
		switch str(it, "type") {
		case typeChangeMarker:
			epoch = str(it, "epoch")
			log = append(log, it)
		case typeChange, typeLeft:
			log = append(log, it)
			entries[keyOf(it)] = it
		case typeProject:
			projects[ulidOf(str(it, "id"))] = numberOf(it, attrSeq)
		case typeTask:
			taskProject[str(it, "id")] = ulidOf(str(it, "projectId"))
		}
	}
	if epoch == "" {
		return nil, "", false
	}
	for k := range entries {
		pu := k.PK[len(changesPrefix):]
		if pos, isEntry := positionOf(k.SK); isEntry {
			if seq, live := projects[pu]; live && pos > seq {
				return nil, "", false
			}
		}
	}
	for _, it := range items {
		var pu, id string
		switch str(it, "type") {
		case typeMember:
			pu, id = ulidOf(str(it, "projectId")), str(it, "userId")
		case typeTask:
			pu, id = ulidOf(str(it, "projectId")), str(it, "id")
		case typeComment:
			pu, id = taskProject[str(it, "taskId")], str(it, "id")
		default:
			continue
		}
		if _, live := projects[pu]; !live {
			continue
		}
		e := entries[changeKey(pu, numberOf(it, attrSyncSeq))]
		if e == nil || str(e, "id") != id || e["gone"] != nil {
			return nil, "", false
		}
	}
	return log, epoch, true
}
