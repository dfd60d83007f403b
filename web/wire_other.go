//go:build !unix

package web

// rawWriter is none where the platform offers no non-blocking write.
type rawWriter struct{}

// tryWrite takes nothing at once where the platform offers no
// non-blocking write: every byte goes through the backlog's goroutine.
func (w *wire) tryWrite([]byte) (int, error) { return 0, nil }
