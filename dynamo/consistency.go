package dynamo

import "context"

// Consistency names how a read is made, strongly or eventually
// consistent, and why. A strongly consistent read costs twice an
// eventually consistent one (1 RCU per 4 KB against 0.5) and sees every
// write acknowledged before it; an eventually consistent one may be served
// by a replica that lags the last writes (DynamoDB: usually within a
// second). GSIs are always eventually consistent, whatever is asked.
//
// A read takes its consistency from its context (WithConsistency); a
// context that names none reads strongly (Guard), so that nothing reads
// eventually by accident. docs/design.md, "Consistency", lists every access.
type Consistency struct {
	// Strong: ConsistentRead on the table's reads.
	Strong bool
	// Why names the guarantee that needs it, or says why none does.
	Why string
}

var (
	// Guard is a mutation's: the checks that decide what it may write,
	// and its answer (read-your-writes), read strongly. (Its transaction's
	// conditions check again at the write.)
	Guard = Consistency{true, "a mutation's guard and answer: what it may write is decided on the last write"}
	// EventCheck is the live hub's: the contract's "visibility is checked
	// on every event": an event after a member's removal never reaches them.
	EventCheck = Consistency{true, "the contract's check on every event: no event after a removal reaches the removed"}
	// SyncRead is a sync's: its token must not pass over a change or a
	// project it has not seen (docs/sync.md).
	SyncRead = Consistency{true, "a sync's token: no change or project passed over"}
	// Screen is a query's: eventually consistent at half the units. A
	// member removed a moment ago may still see the project while the
	// replica of their profile lags (about a second), never after a strong
	// read sees the removal (TestVisibilityLagsNoMoreThanTheTablesReplicas).
	Screen = Consistency{false, "a screen: a replica's lag (about a second) is no guarantee broken"}
)

type consistencyKey struct{}

// WithConsistency returns ctx whose reads are made with c.
func WithConsistency(ctx context.Context, c Consistency) context.Context {
	return context.WithValue(ctx, consistencyKey{}, c)
}

// ConsistencyOf is the consistency of ctx's reads: Guard unless named.
func ConsistencyOf(ctx context.Context) Consistency {
	if c, ok := ctx.Value(consistencyKey{}).(Consistency); ok {
		return c
	}
	return Guard
}

// strong reports whether ctx's reads of the table are strongly consistent.
func strong(ctx context.Context) bool { return ConsistencyOf(ctx).Strong }
