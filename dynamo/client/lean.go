package client

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Lean is a client option that takes out of every call's middleware stack
// what the server does not need, through the SDK's own stack API
// (APIOptions); each costs allocations on every DynamoDB call:
//
//   - ClientRequestID: a random invocation id header per call (for the SDK's
//     own metrics);
//   - UserAgent: the SDK's user-agent string, built for every call;
//   - RecursionDetection: reads the Lambda and X-Ray environment on every
//     call, to pass a trace header the server never has;
//   - RequestResponseLogger: logs wire traffic only with ClientLogMode,
//     which the server never sets.
//
// Retries, signing, credentials and endpoint resolution stay. Against a
// loopback endpoint (DynamoDB Local, dynalite, the embedded store) it also
// skips the CRC32 check of each response body: bytes that never leave the
// machine cannot be damaged on the way.
//
// It also wraps the HTTP client (o.HTTPClient, so it comes after TuneHTTP)
// so that each request goes out in one write (oneWrite).
func Lean(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		for _, id := range []string{"ClientRequestID", "UserAgent", "RecursionDetection"} {
			if _, err := s.Build.Remove(id); err != nil {
				return err
			}
		}
		_, err := s.Deserialize.Remove("RequestResponseLogger")
		return err
	})
	if o.BaseEndpoint != nil && isLoopback(*o.BaseEndpoint) {
		o.DisableValidateResponseChecksum = true
	}
	if o.HTTPClient != nil {
		o.HTTPClient = oneWrite{o.HTTPClient}
	}
}

// maxOneWrite bounds the request bodies that oneWrite copies: DynamoDB's
// largest request (a BatchWriteItem) is 16 MB; a larger one goes as it is.
const maxOneWrite = 16 << 20

// oneWrite sends each request's headers and body in one write to the
// connection instead of two. net/http flushes the headers on their own
// before copying a body it does not know to be in memory (to let a server
// answer early), and the SDK's body is an opaque reader, although the whole
// request is in memory by then (it was signed). On loopback every write
// costs a system call and a wake-up of the store; on the network, a packet.
// The body's bytes are copied once into a bytes.Reader, which net/http
// recognises; what is sent is byte for byte the same.
type oneWrite struct{ next dynamodb.HTTPClient }

// GetTransport returns the wrapped client's transport, if it tells it (as
// the SDK's BuildableClient that TuneHTTP makes does); nil otherwise.
func (c oneWrite) GetTransport() *http.Transport {
	if t, ok := c.next.(interface{ GetTransport() *http.Transport }); ok {
		return t.GetTransport()
	}
	return nil
}

// Do sends r through the wrapped client, its body read into memory first.
func (c oneWrite) Do(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength <= 0 || r.ContentLength > maxOneWrite {
		return c.next.Do(r)
	}
	buf := make([]byte, r.ContentLength)
	_, err := io.ReadFull(r.Body, buf)
	_ = r.Body.Close() // the client's to close, as a transport would
	if err != nil {
		return nil, err
	}
	r2 := new(http.Request)
	*r2 = *r // a shallow copy, as http.Request.WithContext makes: r is the caller's
	r2.Body = io.NopCloser(bytes.NewReader(buf))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	return c.next.Do(r2)
}

// isLoopback reports whether endpoint is a URL of this machine.
func isLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
