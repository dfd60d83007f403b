package client_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

func options(opts ...func(*dynamodb.Options)) dynamodb.Options {
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1")},
		client.Options(opts...)...).Options()
}

func TestClientOptionsCarryTheProductionRetryPolicy(t *testing.T) {
	o := options()
	if got := o.Retryer.MaxAttempts(); got != client.RetryAttempts {
		t.Errorf("retry attempts = %d, want the production %d", got, client.RetryAttempts)
	}
	hc, ok := o.HTTPClient.(interface{ GetTransport() *http.Transport })
	if !ok || hc.GetTransport().MaxIdleConnsPerHost != client.MaxConnsPerHost {
		t.Errorf("HTTP client %T is not the tuned one (client.TuneHTTP)", o.HTTPClient)
	}
	if n := len(o.APIOptions); n < 2 {
		t.Errorf("%d API options, want the call counter and the deadlines at least", n)
	}
}

func TestClientOptionsLetCallersReplaceARetryPolicyExplicitly(t *testing.T) {
	if got := options(client.RetryPolicy(2, time.Millisecond)).Retryer.MaxAttempts(); got != 2 {
		t.Errorf("retry attempts = %d, want the caller's 2", got)
	}
}
