package subscription

import (
	"sync/atomic"
	"time"

	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/policy"
)

// The path of one event, from the change to the bytes on each
// subscriber's socket. Before this file:
//
//  1. dynamo: a mutation commits its change with an outbox item in one
//     transaction and hands the event (domain.Event) to the store's
//     EventSink (dynamo/outbox.go; the sweep publishes what was lost).
//  2. live.Broker.Publish: the event as JSON of the codec's private
//     structs (live/codec.go) to JetStream, on its project's subject; the
//     mutation answers once the stream acknowledged it.
//  3. live.Hub.receive: each instance's one consumer of the stream's tail
//     decodes it and queues it to its project's feed, if the instance has
//     subscribers of the project (else it costs nothing more).
//  4. live.Hub.run, live.Hub.deliver: in stream order per project, one
//     check for all the project's subscribers (policy.SeesProject, through
//     dynamo.Store.Membership: the project exists, who is a member); the
//     others' subscriptions end (NOT_FOUND); a replay (live/replay.go)
//     hands its subscriber's events in the same way. Then Deliver, here,
//     in the feed's goroutine:
//
// Deliver: 5. charge each recipient's cost budget; 6. group the
// recipients by what they are answered (group.go); 7. resolve and encode
// each group once, as one of its viewers, the groups at once (resolve.go:
// gqlgen's executor over the event's shared loaders, their reads
// dispatched by level for all); 8. check again, in one strongly consistent
// read that starts after every read of the resolutions, that the project
// exists and which recipients are members now (policy.FinalEvent: not for
// the last event of one who left); 9. write the same bytes to each member's
// stream (Stream.Send, which never waits: a subscriber too far behind is
// ended, ErrSlow), the recipients split in chunks that the delivering
// goroutine and helpers share, GOMAXPROCS writers at most for all the
// projects delivering at once (fanout.go); the hub
// then ends the streams the event ends.

// batch is the recipients of one event answered with the same bytes.
type batch struct {
	g      *group
	viewer string // the viewer it is resolved as (its first recipient's)
	final  bool   // the last event of a viewer who left the project
	subs   []*live.Subscription
	owners []*subscriber
}

type batchKey struct {
	g      *group
	final  bool
	viewer string // only for a selection resolved per viewer
}

// Deliver delivers d to its recipients (live.Receiver): the steps 5 to 9
// above.
func (s *Server) Deliver(d *live.Delivery, to []live.Recipient) {
	ev := d.Event
	// 5, 6: charge and group.
	var batches []*batch
	byKey := map[batchKey]*batch{}
	for _, r := range to {
		sub, ok := r.Sub.Owner().(*subscriber)
		if !ok {
			continue
		}
		if s.cfg.Charge != nil {
			if err := s.cfg.Charge(sub.viewer, sub.cost); err != nil {
				r.Sub.End(err)
				continue
			}
		}
		k := batchKey{g: sub.group, final: policy.FinalEvent(sub.viewer, ev)}
		if sub.group.perViewer {
			k.viewer = sub.viewer
		}
		b := byKey[k]
		if b == nil {
			b = &batch{g: sub.group, viewer: sub.viewer, final: k.final}
			byKey[k] = b
			batches = append(batches, b)
		}
		b.subs = append(b.subs, r.Sub)
		b.owners = append(b.owners, sub)
	}
	// 7: resolve and encode each batch once, all at once (resolve.go).
	responses, late := s.resolveAll(d, batches)
	var viewers []string
	seen := map[string]bool{}
	for i, b := range batches {
		if b.final || late[i] {
			continue
		}
		for _, sub := range b.owners {
			if !seen[sub.viewer] {
				seen[sub.viewer] = true
				viewers = append(viewers, sub.viewer)
			}
		}
	}
	// 8: who may see it now, in one read after all the resolutions' reads.
	var exists bool
	var member map[string]bool
	var err error
	if len(viewers) > 0 {
		exists, member, err = s.cfg.Store.Membership(d.Shared.Ctx, ev.ProjectID, viewers)
	}
	// 9: the same bytes to each, the recipients in chunks across the Ps.
	var sent atomic.Int64
	chunks := chunksOf(batches)
	fanOut(len(chunks), func(c int) {
		ch := chunks[c]
		b, n := batches[ch.batch], 0
		for j := ch.from; j < ch.to; j++ {
			ls, sub := b.subs[j], b.owners[j]
			switch {
			case late[ch.batch]:
				ls.End(errLate)
			case b.final:
				n += s.send(ls, sub, responses[ch.batch])
			case err != nil:
				ls.End(live.ErrUnchecked)
			case !exists || !member[sub.viewer]:
				ls.End(live.ErrGone) // as the hub's own end of such a subscription
			default:
				n += s.send(ls, sub, responses[ch.batch])
			}
		}
		sent.Add(int64(n))
	})
	if len(batches) > 0 {
		tel := batches[0].owners[0].tel
		if !d.Received.IsZero() { // before the count, which tests wait for
			tel.EventFannedOut(time.Since(d.Received))
		}
		tel.EventsResolved(len(batches))
		tel.EventsDelivered(int(sent.Load()))
	}
}

// send writes response to sub's stream, or ends the subscription of a
// subscriber too far behind to take it; it returns the events sent.
func (s *Server) send(ls *live.Subscription, sub *subscriber, response []byte) int {
	if sub.stream.Send(response) {
		return 1
	}
	ls.End(live.ErrSlow)
	return 0
}
