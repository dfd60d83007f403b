package web

import "sync"

// parkSlot is one connection's place in parking (park_linux.go): the id it
// is parked as, 0 while a goroutine reads it. Its owner's mutex guards it.
type parkSlot struct{ id uint64 }

// reserve parks the connection as a new id, with resume to run once its
// socket wakes it (the slot emptied first); mu, the owner's, is held.
func (s *parkSlot) reserve(mu *sync.Mutex, resume func()) uint64 {
	var id uint64
	id = parking.reserve(func() {
		mu.Lock()
		if s.id == id {
			s.id = 0
		}
		mu.Unlock()
		resume()
	})
	s.id = id
	return id
}

// wake takes the connection out of parking, if it is parked, and runs
// resume on a goroutine of its own (the server closed it: its reader must
// see the end); mu, the owner's, is not held.
func (s *parkSlot) wake(mu *sync.Mutex, resume func()) {
	mu.Lock()
	id := s.id
	s.id = 0
	mu.Unlock()
	if id != 0 && parking.unpark(id) {
		go resume()
	}
}
