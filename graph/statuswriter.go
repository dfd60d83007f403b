package graph

import "net/http"

// statusWriter lets a decision made while the operation ran (a refusal by
// an interceptor) change the HTTP status gqlgen's transport writes: the
// first WriteHeader, explicit or by the first Write, goes through rewrite,
// which may also set headers.
type statusWriter struct {
	http.ResponseWriter
	rewrite func(h http.Header, status int) int
	wrote   bool
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
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
