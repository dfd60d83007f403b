package dynamo

import (
	"context"
	"strings"
)

// TaskIDsByTag is access pattern 6: the ids of the tasks with the tag in the
// given projects, by due date, tasks without a due date last; one Query per
// project, run at once and merged. keep sees task ids. Returns EINVALID,
// EUNAVAILABLE.
func (s *Store) TaskIDsByTag(ctx context.Context, tag string, projectIDs []string, page Page, keep Filter[string]) (*Conn[string], error) {
	name, err := NormalizeTag(tag)
	if err != nil {
		return nil, err
	}
	pks := make([]string, 0, len(projectIDs))
	for _, id := range projectIDs {
		p, err := ParseProjectID(id)
		if err != nil {
			return nil, err
		}
		pks = append(pks, tagTasksPK(name, p))
	}
	conv := func(it item) (string, error) { return str(it, "taskId"), nil }
	spec := tasksByTag.of(pks...)
	spec.keep = keepAs(keep, conv)
	c, err := s.list(ctx, spec, page)
	if err != nil {
		return nil, err
	}
	return convConn(c, conv)
}

// NormalizeTag trims and lower-cases a tag and checks it: 1-50 characters of
// a-z, 0-9, '-', '_', '.'. Returns EINVALID.
func NormalizeTag(tag string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(tag))
	if t == "" || len(t) > 50 {
		return "", Errorf(EINVALID, "tag %q must have 1 to 50 characters", clip(tag))
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return "", Errorf(EINVALID, "tag %q may only contain a-z, 0-9, '-', '_' and '.'", clip(tag))
		}
	}
	return t, nil
}
