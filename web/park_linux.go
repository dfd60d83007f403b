package web

import (
	"net"
	"sync"
	"syscall"
)

// Parking: an idle connection holds no goroutine. Once a WebSocket's
// reader has handled what the client sent and nothing more waits, the
// connection is parked: its socket is watched by one epoll instance for
// the whole process, and its reader goroutine ends. When the client sends
// (a message, a pong, a close) or leaves, the one goroutine waiting on
// the epoll instance starts the connection's reader again, which reads
// what came, handles it and parks again. Closing a parked connection from
// the server's side (a keep-alive unanswered, a slow consumer's cut-off,
// a write that failed) resumes its reader too (unpark), which then sees
// the end. A parked connection costs its entry here and the kernel's
// registration; a reader goroutine cost its stack (4 KiB once the
// runtime's adaptive start had risen), a third of an idle subscriber.

// parking is the process's parked connections.
var parking parker

// parker is an epoll instance and the connections parked on it, by id
// (an id is used once: an event for a connection that was resumed
// meanwhile finds nothing).
type parker struct {
	once sync.Once
	epfd int // -1: parking is not available (the reader goroutines stay)

	mu      sync.Mutex
	next    uint64
	parked  map[uint64]func() // the resume of each parked connection
	running bool              // wait runs
}

// parkWait is how long the waiting goroutine waits, at most, before it
// looks whether any connection is still parked (it ends when none is).
const parkWait = 1000 // ms

func (p *parker) init() {
	p.once.Do(func() {
		fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			fd = -1
		}
		p.epfd, p.parked = fd, map[uint64]func(){}
	})
}

// available reports whether connections can be parked here.
func (p *parker) available() bool {
	p.init()
	return p.epfd >= 0
}

// reserve notes a connection about to be parked, with resume to run (on
// a goroutine of its own) once its socket has bytes to read or is closed,
// and returns its id: from now on unpark(id) can take it out, before it
// is even armed.
func (p *parker) reserve(resume func()) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	id := p.next
	p.parked[id] = resume
	if !p.running {
		p.running = true
		go p.wait()
	}
	return id
}

// arm watches nc's socket for the connection reserved as id, and reports
// whether its reader must now stop: true once armed, or once it was
// resumed meanwhile (another reader goes on); false when nc could not be
// parked (closed, no raw socket): its reader reads on.
func (p *parker) arm(nc net.Conn, id uint64) bool {
	var err, cerr error
	if sc, ok := nc.(syscall.Conn); !ok {
		err = syscall.ENOTSOCK
	} else if rc, rerr := sc.SyscallConn(); rerr != nil {
		err = rerr
	} else {
		// Registered while the descriptor is held open (Control): a
		// socket closed after this leaves the epoll set by itself, and
		// its closer resumes the connection (unpark).
		err = rc.Control(func(fd uintptr) {
			ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT,
				Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
			cerr = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_MOD, int(fd), &ev)
			if cerr == syscall.ENOENT { // its first parking
				cerr = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
			}
		})
	}
	if err != nil || cerr != nil {
		return !p.unpark(id)
	}
	return true
}

// unpark takes the connection parked as id out, and reports whether it
// was still parked: then its caller resumes it itself; false: it was
// resumed already.
func (p *parker) unpark(id uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.parked[id]; !ok {
		return false
	}
	delete(p.parked, id)
	return true
}

// wait resumes each connection whose socket has something to read, until
// none is parked.
func (p *parker) wait() {
	events := make([]syscall.EpollEvent, 128)
	for {
		n, err := syscall.EpollWait(p.epfd, events, parkWait)
		if err != nil && err != syscall.EINTR {
			n = 0
		}
		p.mu.Lock()
		for _, ev := range events[:max(n, 0)] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if resume, ok := p.parked[id]; ok {
				delete(p.parked, id)
				go resume()
			}
		}
		if len(p.parked) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}
