package graph

import "net/http"

// statusWriter lets a decision made while the operation ran (a refusal by
// an interceptor) change the HTTP status gqlgen's transport writes: the
// first WriteHeader, explicit or by the first Write, goes through rewrite,
// which may also set headers.
type statusWriter struct {
	http.ResponseWriter
	rewrite func(h http.Header, status int) int
	// body, when set, may rewrite each write of the body.
	body  func([]byte) []byte
	wrote bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		status = w.rewrite(w.Header(), status)
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
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
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
