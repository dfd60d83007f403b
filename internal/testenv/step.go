package testenv

import (
	"sync"

	"github.com/taskgraph/taskgraph/internal/stepmode"
)

// Stepper runs requests level by level, for tests that pin DynamoDB calls
// and round trips. The handler's loaders are in step mode
// (loaders.Config.Steps set to the stepper's trigger): each
// operation counts the work it runs (its fields, its reads and their
// goroutines) and flushes its loaders when all of it waits on a loader, so
// that a level of a query is one batch per loader whatever the machine's
// load. When an operation waits and no loader has keys, the stepper calls
// release (a gate holding the level's calls, see bench.Gate), so that a
// round trip is everything the server can ask before it needs an answer.
type Stepper struct {
	trigger *stepmode.Trigger
	once    sync.Once
}

// StartStepper starts stepping the operations of trigger's handlers
// (release may be nil). Stop it when the requests are done.
func StartStepper(trigger *stepmode.Trigger, release func() int) *Stepper {
	if release != nil {
		trigger.SetIdle(release)
	}
	return &Stepper{trigger: trigger}
}

// Stop stops calling release.
func (s *Stepper) Stop() {
	s.once.Do(func() { s.trigger.SetIdle(nil) })
}
