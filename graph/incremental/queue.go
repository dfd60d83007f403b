package incremental

import (
	"slices"
)

// workQueue is graphql-js 17's work queue (createWorkQueue), without
// streams: which delivery groups are released (announced: roots), which
// tasks each waits for (pending), and, as tasks end, the groups delivered
// or failed and the children released with them. Its methods are called
// with incremental.mu held.
type workQueue struct {
	roots   []*deliveryGroup // rootGroups, in the order released
	groups  map[*deliveryGroup]*groupNode
	tasks   map[*incTask]*taskNode // the tasks started
	events  []*incTask             // tasks whose end is to be handled, in order
	stopped bool
	launch  func(*incTask) // starts resolving a task
}

type groupNode struct {
	children []*deliveryGroup
	tasks    []*incTask
	pending  int
}

type taskNode struct {
	value bool // it succeeded, and its value is not delivered yet
}

// work is what a run leaves to the queue: the groups it opened and the
// tasks it started, those below a null dropped.
type work struct {
	groups []*deliveryGroup
	tasks  []*incTask
}

// queueEvent is an event of the work queue, which a payload reports.
type queueEvent struct {
	kind      queueEventKind
	group     *deliveryGroup
	values    []*incTask       // groupValues: the tasks whose data it delivers
	newGroups []*deliveryGroup // groupSuccess: the groups it releases
	err       error            // groupFailure
}

type queueEventKind uint8

const (
	groupValues queueEventKind = iota
	groupSuccess
	groupFailure
	termination
)

// begin takes the initial run's work and returns the groups released with
// the initial payload (those without tasks pruned, their children in
// their place), whose tasks start.
func (q *workQueue) begin(w *work) []*deliveryGroup {
	initial := q.pruneEmpty(q.integrate(w, nil), nil)
	q.roots = append(q.roots, initial...)
	for _, g := range initial {
		q.startGroup(g)
	}
	return initial
}

// drain handles the tasks' ends so far, and those their handling makes
// known at once (tasks of newly released groups that ended before), and
// returns the events.
func (q *workQueue) drain() []queueEvent {
	var out []queueEvent
	for len(q.events) > 0 && !q.stopped {
		evs := q.events
		q.events = nil
		for _, t := range evs {
			if t.state == taskSucceeded {
				out = append(out, q.taskSuccess(t)...)
			} else {
				out = append(out, q.taskFailure(t)...)
			}
		}
		if len(q.roots) == 0 {
			q.stopped = true
			out = append(out, queueEvent{kind: termination})
		}
	}
	return out
}

func (q *workQueue) integrate(w *work, parent *incTask) []*deliveryGroup {
	if w == nil {
		return nil
	}
	var roots []*deliveryGroup
	visited := map[*deliveryGroup]bool{}
	for _, g := range w.groups {
		q.addGroup(g, w.groups, &roots, visited, parent)
	}
	for _, t := range w.tasks {
		q.addTask(t)
	}
	return roots
}

func (q *workQueue) addGroup(g *deliveryGroup, set []*deliveryGroup, roots *[]*deliveryGroup, visited map[*deliveryGroup]bool, parent *incTask) {
	if visited[g] {
		return
	}
	visited[g] = true
	if p := g.parent; p != nil {
		if slices.Contains(set, p) {
			q.addGroup(p, set, roots, visited, parent)
		}
		if q.groups[p] == nil {
			return
		}
	}
	q.groups[g] = &groupNode{}
	switch {
	case parent == nil && g.parent == nil:
		*roots = append(*roots, g)
	case g.parent != nil:
		n := q.groups[g.parent]
		n.children = append(n.children, g)
	}
}

func (q *workQueue) addTask(t *incTask) {
	for _, g := range t.groups {
		if n := q.groups[g]; n != nil {
			n.tasks = append(n.tasks, t)
			n.pending++
			if q.isRoot(g) {
				q.startTask(t)
			}
		}
	}
}

func (q *workQueue) isRoot(g *deliveryGroup) bool { return slices.Contains(q.roots, g) }

func (q *workQueue) removeRoot(g *deliveryGroup) {
	q.roots = slices.DeleteFunc(q.roots, func(r *deliveryGroup) bool { return r == g })
}

// pruneEmpty returns groups, those without tasks replaced by their
// children (pruned the same way), dropping them.
func (q *workQueue) pruneEmpty(groups, acc []*deliveryGroup) []*deliveryGroup {
	for _, g := range groups {
		n := q.groups[g]
		switch {
		case n == nil:
		case len(n.tasks) == 0:
			delete(q.groups, g)
			acc = q.pruneEmpty(n.children, acc)
		default:
			acc = append(acc, g)
		}
	}
	return acc
}

// startNewWork releases groups (and the children of those it finishes at
// once).
func (q *workQueue) startNewWork(groups []*deliveryGroup) []queueEvent {
	var events []queueEvent
	toStart := slices.Clone(groups)
	for i := 0; i < len(toStart); i++ {
		g := toStart[i]
		if !q.isRoot(g) {
			q.roots = append(q.roots, g)
		}
		q.startGroup(g)
		if n := q.groups[g]; n != nil {
			q.maybeFinish(g, n, &events, &toStart)
		}
	}
	return events
}

func (q *workQueue) startGroup(g *deliveryGroup) {
	if n := q.groups[g]; n != nil {
		for _, t := range slices.Clone(n.tasks) {
			q.startTask(t)
		}
	}
}

// startTask starts t: resolving it, the first time, and its end, past or
// to come, becomes an event (a failure again for each start, as
// graphql-js rethrows it). A task is resolved once one of its groups is
// released (graphql-js without early execution): the initial part's reads
// are done by then, and a task below a null never runs.
func (q *workQueue) startTask(t *incTask) {
	_, started := q.tasks[t]
	if !started {
		q.tasks[t] = &taskNode{}
	}
	switch {
	case t.state == taskFailed:
		q.events = append(q.events, t)
	case started:
	case t.state == taskSucceeded:
		q.events = append(q.events, t)
	default:
		t.notify = true
		if t.state == taskWaiting {
			t.state = taskRunning
			q.launch(t)
		}
	}
}

func (q *workQueue) taskSuccess(t *incTask) []queueEvent {
	tn := q.tasks[t]
	if tn == nil {
		return nil
	}
	tn.value = true
	q.integrate(t.work, t)
	var events []queueEvent
	var newGroups []*deliveryGroup
	for _, g := range t.groups {
		if n := q.groups[g]; n != nil {
			n.pending--
			q.maybeFinish(g, n, &events, &newGroups)
		}
	}
	return append(events, q.startNewWork(newGroups)...)
}

func (q *workQueue) maybeFinish(g *deliveryGroup, n *groupNode, events *[]queueEvent, newGroups *[]*deliveryGroup) {
	if !q.isRoot(g) || n.pending != 0 {
		return
	}
	delete(q.groups, g)
	var values []*incTask
	for _, t := range slices.Clone(n.tasks) {
		if tn := q.tasks[t]; tn != nil {
			if tn.value {
				values = append(values, t)
			}
			q.removeTask(t)
		}
	}
	children := q.pruneEmpty(n.children, nil)
	q.removeRoot(g)
	if len(values) > 0 {
		*events = append(*events, queueEvent{kind: groupValues, group: g, values: values})
	}
	*events = append(*events, queueEvent{kind: groupSuccess, group: g, newGroups: children})
	*newGroups = append(*newGroups, children...)
}

func (q *workQueue) taskFailure(t *incTask) []queueEvent {
	if q.tasks[t] == nil {
		return nil
	}
	var events []queueEvent
	for _, g := range t.groups {
		if n := q.groups[g]; n != nil && q.isRoot(g) {
			q.removeGroup(g, n)
			events = append(events, queueEvent{kind: groupFailure, group: g, err: t.err})
		}
	}
	return events
}

func (q *workQueue) removeGroup(g *deliveryGroup, n *groupNode) {
	q.removeRoot(g)
	delete(q.groups, g)
	for _, t := range slices.Clone(n.tasks) {
		if !slices.ContainsFunc(t.groups, func(tg *deliveryGroup) bool { return q.groups[tg] != nil }) {
			q.removeTask(t)
		}
	}
	for _, c := range n.children {
		if cn := q.groups[c]; cn != nil {
			q.removeGroup(c, cn)
		}
	}
}

func (q *workQueue) removeTask(t *incTask) {
	for _, g := range t.groups {
		if n := q.groups[g]; n != nil {
			n.tasks = slices.DeleteFunc(n.tasks, func(x *incTask) bool { return x == t })
		}
	}
	delete(q.tasks, t)
}
