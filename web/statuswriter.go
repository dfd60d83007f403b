package web

import "net/http"

// statusWriter lets a decision made while the operation ran (a refusal by
// a step of the pipeline, a request error) change the HTTP status gqlgen's
// transport writes. The status is sent with the first write of the body
// (or by finish, when none comes), not when the transport calls
// WriteHeader: gqlgen writes a request error's status before it runs the
// response middleware that records what the answer is. That status goes
// through rewrite, which may also set headers.
type statusWriter struct {
	http.ResponseWriter
	rewrite func(h http.Header, status int) int
	// body, when set, may rewrite each write of the body.
	body    func([]byte) []byte
	status  int // the status asked for, not sent yet
	started bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.started && w.status == 0 {
		w.status = status
	}
}

// start sends the status, rewritten, once.
func (w *statusWriter) start() {
	if w.started {
		return
	}
	w.started = true
	w.ResponseWriter.WriteHeader(w.rewrite(w.Header(), max(w.status, http.StatusOK)))
}

// finish sends the status of a response without a body.
func (w *statusWriter) finish() {
	if w.status != 0 {
		w.start()
	}
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.start()
	if w.body != nil {
		if _, err := w.ResponseWriter.Write(w.body(b)); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends what is written so far (the parts of a multipart/mixed
// answer), the status first.
func (w *statusWriter) Flush() {
	w.start()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
