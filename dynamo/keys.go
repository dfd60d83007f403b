package dynamo

// Every key string of the table is built here and nowhere else. Arguments are
// ULIDs and validated user ids or tag names, never raw client input.
//
//	item        PK              SK                 GSI1PK                  GSI1SK              GSI2PK            GSI2SK
//	user        USER#<u>        PROFILE
//	project     PROJECT#<p>     PROJECT
//	membership  PROJECT#<p>     MEMBER#<u>         USER#<u>                PROJECT#<p>
//	task        TASK#<t>        TASK               PROJECT#<p>             DUE#<date|~>#<t>    USER#<u>#OPEN|DONE DUE#<date|~>#<t>
//	                                                                                           or UNASSIGNED#PROJECT#<p>
//	tag link    TASK#<t>        TAG#<name>         TAG#<name>#PROJECT#<p>  DUE#<date|~>#<t>
//	comment     TASK#<t>        COMMENT#<c>
//	cleanup job CLEANUP         PROJECT#<p> | TASK#<t>
//	idempotency IDEM#<u>#<key>  OP#<mutation field or alias>

// Attribute and index names.
const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	attrGSI2PK = "GSI2PK"
	attrGSI2SK = "GSI2SK"

	indexGSI1 = "GSI1"
	indexGSI2 = "GSI2"
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

	// noDue stands for a missing due date in due-date sort keys. '~' sorts
	// after every digit, so tasks without a due date come last.
	noDue = "~"
	// rangeEnd closes a prefix range: it sorts after every ULID, date and
	// tag character.
	rangeEnd = "~~"
)

type key struct{ PK, SK string }

func userPK(u string) string           { return "USER#" + u }
func userKey(u string) key             { return key{userPK(u), profileSK} }
func projectPK(p string) string        { return projectPrefix + p }
func projectKey(p string) key          { return key{projectPK(p), projectSK} }
func memberSK(u string) string         { return memberPrefix + u }
func memberKey(p, u string) key        { return key{projectPK(p), memberSK(u)} }
func taskPK(t string) string           { return "TASK#" + t }
func taskKey(t string) key             { return key{taskPK(t), taskSK} }
func commentSK(c string) string        { return commentPrefix + c }
func commentKey(t, c string) key       { return key{taskPK(t), commentSK(c)} }
func tagSK(name string) string         { return tagPrefix + name }
func tagKey(t, name string) key        { return key{taskPK(t), tagSK(name)} }
func cleanupKey(kind, id string) key   { return key{cleanupPK, kind + "#" + id} }
func idemKey(u, k, op string) key      { return key{"IDEM#" + u + "#" + k, "OP#" + op} }
func userProjectsPK(u string) string   { return userPK(u) }
func userProjectsSK(p string) string   { return projectPrefix + p }
func projectTasksPK(p string) string   { return projectPK(p) }
func tagTasksPK(name, p string) string { return tagPrefix + name + "#" + projectPrefix + p }

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

// dueSK orders tasks by due date, then by id (ids sort in creation order);
// tasks without a due date sort last.
func dueSK(due *Date, t string) string {
	d := noDue
	if due != nil {
		d = due.String()
	}
	return duePrefix + d + "#" + t
}

// dueBefore is the bound below which lie the due-date keys of dates before d.
func dueBefore(d Date) string { return duePrefix + d.String() }

// taskOfDueSK returns the task ULID at the end of a due-date sort key.
func taskOfDueSK(sk string) (string, bool) {
	if len(sk) < len(duePrefix)+ulidLen+2 || sk[:len(duePrefix)] != duePrefix {
		return "", false
	}
	rest := sk[len(duePrefix):]
	date, t := rest[:len(rest)-ulidLen-1], rest[len(rest)-ulidLen:]
	if rest[len(rest)-ulidLen-1] != '#' {
		return "", false
	}
	if date != noDue {
		if _, err := ParseDate(date); err != nil {
			return "", false
		}
	}
	return parseULID(t)
}
