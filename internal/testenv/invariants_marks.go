package testenv

import (
	"slices"

	"github.com/taskgraph/taskgraph/dynamo"
)

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
