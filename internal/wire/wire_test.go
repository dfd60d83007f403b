package wire_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/wire"
)

func client(opts ...func(*dynamodb.Options)) dynamodb.Options {
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1")},
		wire.ClientOptions(opts...)...).Options()
}

func TestClientOptionsCarryTheProductionRetryPolicy(t *testing.T) {
	o := client()
	if got := o.Retryer.MaxAttempts(); got != wire.RetryAttempts {
		t.Errorf("retry attempts = %d, want the production %d", got, wire.RetryAttempts)
	}
	hc, ok := o.HTTPClient.(interface{ GetTransport() *http.Transport })
	if !ok || hc.GetTransport().MaxIdleConnsPerHost != dynamo.MaxConnsPerHost {
		t.Errorf("HTTP client %T is not the tuned one (dynamo.TuneHTTP)", o.HTTPClient)
	}
	if n := len(o.APIOptions); n < 2 {
		t.Errorf("%d API options, want the call counter and the deadlines at least", n)
	}
}

func TestClientOptionsLetCallersReplaceARetryPolicyExplicitly(t *testing.T) {
	if got := client(dynamo.RetryPolicy(2, time.Millisecond)).Retryer.MaxAttempts(); got != 2 {
		t.Errorf("retry attempts = %d, want the caller's 2", got)
	}
}

func TestNewStoreTakesTheClockAndLog(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := wire.NewStore(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "t", nil, func() time.Time { return at })
	if got := s.Now(); !got.Equal(at) {
		t.Errorf("store clock = %v, want %v", got, at)
	}
	if s.Log == nil || s.Table() != "t" {
		t.Errorf("store log %v, table %q", s.Log, s.Table())
	}
}
