package loaders

import (
	"sync"
	"sync/atomic"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// readLog keeps what an operation read of the viewer's profile and of
// projects, as it read them: an HTTP ETag stands on the very profile and
// seqs its answer was made from (graph/etag), never on a later read.
type readLog struct {
	profile  atomic.Pointer[domain.User]
	projects sync.Map // project id → *domain.Project
}

// note records what a point read of ref found (v; nil: nothing).
func (l *Loaders) note(ref dynamo.Ref, v any) {
	switch x := v.(type) {
	case *domain.User:
		if ref == dynamo.UserRef(l.viewer) && x != nil {
			l.read.profile.Store(x)
		}
	case *domain.Project:
		if ref == dynamo.ProjectRef(x.ID) && x != nil {
			l.read.projects.Store(x.ID, x)
		}
	}
}

// ProfileRead is the viewer's profile as the operation read it (nil:
// it read none).
func (l *Loaders) ProfileRead() *domain.User { return l.read.profile.Load() }

// ProjectRead is project id as the operation read its item (nil: it read
// none).
func (l *Loaders) ProjectRead(id string) *domain.Project {
	v, _ := l.read.projects.Load(id)
	p, _ := v.(*domain.Project)
	return p
}
