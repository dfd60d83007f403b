package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

var errStop = errors.New("stop before sending")

// stackOf returns the middleware ids of a Query made with the server's
// client options for endpoint, and the options the client ended with.
func stackOf(t *testing.T, endpoint string) ([]string, dynamodb.Options) {
	t.Helper()
	var ids []string
	var final dynamodb.Options
	capture := func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			ids = append(ids, s.Initialize.List()...)
			ids = append(ids, s.Serialize.List()...)
			ids = append(ids, s.Build.List()...)
			ids = append(ids, s.Finalize.List()...)
			ids = append(ids, s.Deserialize.List()...)
			return errStop
		})
		final = *o
	}
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}, Options(capture)...)
	if _, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t")}); !errors.Is(err, errStop) {
		t.Fatalf("Query: %v, want the capture's stop", err)
	}
	return ids, final
}

func TestLeanKeepsWhatProductionNeeds(t *testing.T) {
	ids, _ := stackOf(t, "https://dynamodb.us-east-1.amazonaws.com")
	for _, gone := range []string{"ClientRequestID", "UserAgent", "RecursionDetection", "RequestResponseLogger"} {
		if slices.Contains(ids, gone) {
			t.Errorf("middleware %s is still in the stack %v", gone, ids)
		}
	}
	for _, kept := range []string{"Retry", "Signing", "GetIdentity", "ResolveEndpointV2", "ResolveAuthScheme", "OperationSerializer",
		"OperationDeserializer", "taskgraphDeadline", "taskgraphRecord"} {
		if !slices.Contains(ids, kept) {
			t.Errorf("middleware %s is missing from the stack %v", kept, ids)
		}
	}
}

func TestLeanChecksumsOnlyOffForLoopback(t *testing.T) {
	tests := []struct {
		endpoint string
		off      bool
	}{
		{"http://127.0.0.1:8000", true},
		{"http://localhost:8000", true},
		{"http://[::1]:8000", true},
		{"https://dynamodb.us-east-1.amazonaws.com", false},
		{"http://10.0.0.5:8000", false},
		{"http://localhost.example.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			if _, o := stackOf(t, tt.endpoint); o.DisableValidateResponseChecksum != tt.off {
				t.Errorf("DisableValidateResponseChecksum = %v, want %v", o.DisableValidateResponseChecksum, tt.off)
			}
		})
	}
}

func TestLeanSendsEachRequestInOneWrite(t *testing.T) {
	_, o := stackOf(t, "http://127.0.0.1:8000")
	if _, ok := o.HTTPClient.(oneWrite); !ok {
		t.Fatalf("the client's HTTP client is %T, want Lean's oneWrite", o.HTTPClient)
	}
}

// opaqueBody is a request body net/http cannot tell is in memory, as the
// SDK's is.
type opaqueBody struct{ r io.Reader }

func (b *opaqueBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *opaqueBody) Close() error               { return nil }

// countingConn counts the writes to a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

func TestOneWriteSendsHeadersAndBodyTogether(t *testing.T) {
	const payload = `{"TableName":"t","KeyConditionExpression":"#pk = :pk"}`
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(string(b))
		_, _ = io.WriteString(w, "{}")
	}))
	defer srv.Close()
	tests := []struct {
		name   string
		wrap   bool
		writes int64
	}{
		{"net/http alone writes the headers, then the body", false, 2},
		{"oneWrite writes both at once", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var writes atomic.Int64
			tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				return countingConn{c, &writes}, err
			}}
			defer tr.CloseIdleConnections()
			var c dynamodb.HTTPClient = &http.Client{Transport: tr}
			if tt.wrap {
				c = oneWrite{c}
			}
			req, err := http.NewRequest(http.MethodPost, srv.URL, &opaqueBody{strings.NewReader(payload)})
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = int64(len(payload))
			res, err := c.Do(req)
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if n := writes.Load(); n != tt.writes {
				t.Errorf("%d writes to the connection, want %d", n, tt.writes)
			}
			if g, _ := got.Load().(string); g != payload {
				t.Errorf("the server read the body %q, want %q", g, payload)
			}
		})
	}
}

func TestOneWriteLeavesOtherRequestsAlone(t *testing.T) {
	var seen *http.Request
	next := clientFunc(func(r *http.Request) (*http.Response, error) { seen = r; return nil, errStop })
	for _, tt := range []struct {
		name string
		req  func() *http.Request
	}{
		{"no body", func() *http.Request { r, _ := http.NewRequest(http.MethodGet, "http://x", nil); return r }},
		{"unknown length", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, "http://x", &opaqueBody{strings.NewReader("abc")})
			r.ContentLength = -1
			return r
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.req()
			if _, err := (oneWrite{next}).Do(r); !errors.Is(err, errStop) {
				t.Fatalf("Do: %v, want the next client's error", err)
			}
			if seen != r {
				t.Errorf("the next client got another request than the caller's")
			}
		})
	}
}

func TestOneWriteSendsTheSameBodyOnEveryRetry(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b)) // the client's calls follow each other
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if len(bodies) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"try again"}`)
			return
		}
		_, _ = io.WriteString(w, `{"Count":0,"Items":[],"ScannedCount":0}`)
	}))
	defer srv.Close()
	quickRetry := func(o *dynamodb.Options) { o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, time.Millisecond) }
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}, Options(quickRetry)...)
	if _, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t")}); err != nil {
		t.Fatalf("Query: %v, want its retry to succeed", err)
	}
	if len(bodies) != 2 || bodies[0] == "" || bodies[0] != bodies[1] {
		t.Errorf("the server read the bodies %q, want the same non-empty body twice", bodies)
	}
}

type clientFunc func(*http.Request) (*http.Response, error)

func (f clientFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }
