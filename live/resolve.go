package live

import "time"

// What the GraphQL layer needs to resolve an event for its recipients:
// how many of them it may wait for when it re-checks their memberships
// together, and the bound of an event's reads.

// Recipients returns how many of this instance's recipients of the event
// were keeping up (nothing else waiting in their queue) when it was queued
// for them, and will have their membership checked again when it is
// resolved: those whose resolutions are worth waiting for, so that one
// read checks them all. A recipient that was behind resolves the event
// later and is checked on its own.
func (s *Shared) Recipients() int { return int(s.recipients.Load()) }

// keepingUp reports whether nothing waits in the subscriber's queue.
func (s *Subscription) keepingUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) == 0
}

// EventTimeout returns the bound of one event's reads
// (HubConfig.EventTimeout).
func (h *Hub) EventTimeout() time.Duration { return h.cfg.EventTimeout }
