package dynamo

import (
	"slices"
	"strings"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
)

// ProjectsPage is one page of a user's projects (access pattern 2) taken
// from the projects their profile's copies list (copies.go) rather than
// from their memberships in GSI1: newest first, with the same cursors,
// the same page sizes and the same errors as ProjectsOfUser, so that a
// client pages on through either. ids are the projects the viewer may see
// among them (policy.ProjectsSeen, then policy.SeesProject), in any order.
// The profile is a point read the screen makes anyway (the visibility
// check), so the page costs no read of its own. Returns EINVALID.
func ProjectsPage(ids []string, page domain.Page) (*domain.Conn[string], error) {
	size, back, err := pageSize(page)
	if err != nil {
		return nil, err
	}
	after, err := cursorArg("after", page.After, projectsOfUser.cursor)
	if err != nil {
		return nil, err
	}
	before, err := cursorArg("before", page.Before, projectsOfUser.cursor)
	if err != nil {
		return nil, err
	}
	type entry struct{ sk, id string }
	entries := make([]entry, 0, len(ids))
	for _, id := range ids {
		pu, err := domain.ParseProjectID(id)
		if err != nil {
			return nil, err
		}
		sk := userProjectsSK(pu)
		// The list is descending: after a cursor come smaller sort keys,
		// before it larger ones.
		if after != "" && sk >= after || before != "" && sk <= before {
			continue
		}
		entries = append(entries, entry{sk, id})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(b.sk, a.sk) })
	if back {
		slices.Reverse(entries)
	}
	more := len(entries) > size
	entries = entries[:min(len(entries), size)]
	if back {
		slices.Reverse(entries)
	}
	c := &domain.Conn[string]{Items: make([]string, len(entries)), Cursors: make([]string, len(entries))}
	for i, e := range entries {
		c.Items[i], c.Cursors[i] = e.id, cursor.List(e.sk)
	}
	if back {
		c.HasPrev = more
	} else {
		c.HasNext = more
	}
	return c, nil
}
