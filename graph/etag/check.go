package etag

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/policy"
)

// MaxProjects bounds the projects one tag stands on: the check reads
// them with the viewer's profile in one BatchGetItem, 0.5 RCU each (an
// eventually consistent read of an item under 4 KB). An answer showing
// more has no tag.
const MaxProjects = 25

// MaxPending is how many pending profile jobs the check reads, one Query
// page (about 150 bytes each: 0.5 RCU); with more pending, no 304.
const MaxPending = 25

// Checker checks and issues the tags of one server.
type Checker struct {
	Store *dynamo.Store
	// Settle is how long after a change an answer may stand on the seq
	// that change took: the answer's own reads (eventually consistent,
	// and global secondary indexes, which lag the table) must all see
	// the change, or the tag would pair a new seq with old data for good.
	// It bounds the time from a change's clock reading to its commit (a
	// mutation's timeout) and the replicas' lag.
	Settle time.Duration
	// Build names the server's build (its schema and binary): a tag of
	// another build never matches.
	Build string
	// Now is the server's clock: its date is overdueTasks' default asOf,
	// which every tag holds (a tag lasts until midnight, UTC).
	Now func() time.Time
}

// today is the server's date.
func (c *Checker) today() string { return domain.DateOf(c.Now()).String() }

// Begin records when r's operation began (by the server's clock), before
// anything of it is read.
func (r *Request) Begin(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.start = at
}

// Check reports whether the tag the client holds (If-None-Match) is still
// the tag of r's answer, and if so marks r not modified: the query need
// not run. It reads the pending profile jobs (when the tag shows other
// users: one Query), then the viewer's profile and the tag's projects
// (one BatchGetItem); a failed read is no 304 (the query runs).
func (c *Checker) Check(ctx context.Context, r *Request) bool {
	cand := r.candidate()
	p, ok := parse(cand)
	viewer := viewerOf(ctx)
	if cand == "" || !ok || viewer == "" {
		return false
	}
	// The pending jobs first: a profile whose job is gone by then had its
	// projects' seqs moved before the projects are read.
	if p.filter != nil {
		users, more, err := c.Store.PendingProfiles(ctx, MaxPending)
		if err != nil || more {
			return false
		}
		for _, u := range users {
			if mayHold(p.filter, u) {
				return false
			}
		}
	}
	f, err := c.Store.Freshness(ctx, viewer, true, p.projects)
	if err != nil || f.Profile == nil {
		return false
	}
	s := stands{build: c.Build, viewer: viewer, identity: r.identity, today: c.today(), profile: f.Profile, projects: p.projects,
		seqs: make([]int64, len(p.projects)), filter: p.filter}
	for i, pr := range f.Read {
		if pr == nil || !policy.SeesProject(f.Profile, pr.ID) {
			return false
		}
		s.seqs[i] = pr.Seq
	}
	if s.sum() != p.sum {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notModified, r.tag = true, cand
	return true
}

// Issue gives r's answer res its tag when what its fields recorded bounds
// it (docs/caching.md): no error, every dependency within the rules, at
// most MaxProjects projects, each settled. The profile and the projects'
// seqs are those the operation read (l's record); a project it did not
// read is read now (one BatchGetItem), its seq taken only if its change
// settled before the operation began.
func (c *Checker) Issue(ctx context.Context, r *Request, l *loaders.Loaders, res *graphql.Response) {
	if res == nil || len(res.Errors) > 0 || res.Data == nil || l == nil {
		return
	}
	r.mu.Lock()
	d, start := r.deps, r.start
	r.mu.Unlock()
	viewer, profile := viewerOf(ctx), l.ProfileRead()
	if d.unbounded != "" || viewer == "" || profile == nil || profile.ID != viewer || start.IsZero() {
		return
	}
	ids := d.bounds(profile)
	today := domain.DateOf(start).String()
	if ids == nil || c.today() != today { // an answer across midnight: which date it used is unknown
		return
	}
	s := stands{build: c.Build, viewer: viewer, identity: r.identity, today: today, profile: profile, projects: ids,
		seqs: make([]int64, len(ids)), filter: filterOf(slices.Sorted(maps.Keys(d.users)))}
	read := make([]*domain.Project, len(ids))
	var missing []string
	for i, id := range ids {
		if read[i] = l.ProjectRead(id); read[i] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		f, err := c.Store.Freshness(ctx, viewer, false, missing)
		if err != nil {
			return
		}
		j := 0
		for i := range read {
			if read[i] == nil {
				read[i] = f.Read[j]
				j++
			}
		}
	}
	settled := start.Add(-c.Settle)
	for i, p := range read {
		if p == nil || p.SeqAt.After(settled) {
			return
		}
		s.seqs[i] = p.Seq
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tag = s.tag()
}

// bounds returns the projects the answer stands on, sorted, or nil when
// they do not bound it: a comment whose task it did not show, a page of
// the viewer's projects other than their profile's, a user shown who is a
// member of none of them (their name and whether the viewer sees them
// would move no seq of the answer's), a project the profile does not see,
// more than MaxProjects. An answer that shows no project stands on the
// profile alone (an empty, non-nil list).
func (d *deps) bounds(profile *domain.User) []string {
	projects := maps.Clone(d.projects)
	if projects == nil {
		projects = map[string]bool{}
	}
	if d.all {
		for _, id := range policy.ProjectsSeen(profile) {
			projects[id] = true
		}
	}
	for t := range d.comments {
		if _, ok := d.tasks[t]; !ok {
			return nil
		}
	}
	if len(d.pages) > 0 {
		newest := policy.ProjectsSeen(profile)
		slices.Reverse(newest) // ids sort by creation: newest first, as the list
		for _, pg := range d.pages {
			want := newest[:min(pg.first, len(newest))]
			if !slices.Equal(want, pg.ids) || pg.hasNext != (len(newest) > pg.first) {
				return nil
			}
		}
	}
	for _, u := range d.users {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(projects)), func(p string) bool { return policy.SeesProject(u, p) }) {
			return nil
		}
	}
	if len(projects) > MaxProjects {
		return nil
	}
	ids := slices.Sorted(maps.Keys(projects))
	for _, id := range ids {
		if !policy.SeesProject(profile, id) {
			return nil
		}
	}
	if ids == nil {
		ids = []string{}
	}
	return ids
}
