package engine

import (
	"math"
	"sort"
	"strconv"
)

// Consumed capacity, as DynamoDB bills it and reports it to a call that
// asks (ReturnConsumedCapacity TOTAL or INDEXES; the total, by table, as
// CapacityUnits): a read per 4 KB of each item (a Query or Scan: of the
// items it read summed, before any filter; a key not found: one block),
// half of that when eventually consistent; a write per 1 KB of the larger
// of the item before and after it (at least one), twice that in a
// transaction, condition checks included. The same rules as the store's
// client (client.Bill) and graph's TestComputedCapacityPerScreen, checked
// against dynalite there.

// wantsCapacity reports whether a call asked for its consumed capacity.
func wantsCapacity(rcc string) bool { return rcc == "TOTAL" || rcc == "INDEXES" }

// blocks is size in blocks of per bytes, rounded up, at least one.
func blocks(size, per int) float64 { return math.Max(1, math.Ceil(float64(size)/float64(per))) }

// readFactor is a read's factor: 1 strongly consistent, 0.5 eventually.
func readFactor(consistent bool) float64 {
	if consistent {
		return 1
	}
	return 0.5
}

// sizeOf is an item's size; 0 for none.
func sizeOf(it *item) int {
	if it == nil {
		return 0
	}
	return it.size
}

// writeUnits is what the write consumes on its own.
func (w *write) writeUnits() float64 { return blocks(max(sizeOf(w.old), sizeOf(w.next)), 1024) }

// capacity is the units a call consumed, by table.
type capacity map[string]float64

// withCapacity adds c to out, a call's JSON answer (an object), as
// ConsumedCapacity: one object for a call on one table (single), else a
// list, by table name.
func withCapacity(out []byte, c capacity, single bool) []byte {
	if len(out) < 2 || out[len(out)-1] != '}' {
		return out
	}
	b := append([]byte(nil), out[:len(out)-1]...)
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, `"ConsumedCapacity":`...)
	names := make([]string, 0, len(c))
	for n := range c {
		names = append(names, n)
	}
	sort.Strings(names)
	if !single {
		b = append(b, '[')
	}
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"TableName":`...)
		b = appendString(b, n)
		b = append(b, `,"CapacityUnits":`...)
		b = strconv.AppendFloat(b, c[n], 'f', -1, 64)
		b = append(b, '}')
	}
	if !single {
		b = append(b, ']')
	}
	return append(b, '}')
}
