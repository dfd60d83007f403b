package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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

// blockingHTTP answers no request: each waits for its context to end.
type blockingHTTP struct{}

func (blockingHTTP) Do(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

func TestWithCancelOfEndsTheCallsWhenTheParentEnds(t *testing.T) {
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1"),
		Credentials: aws.AnonymousCredentials{}, HTTPClient: blockingHTTP{}}, client.Deadlines)
	parent, cancel := context.WithCancel(context.Background())
	ctx := client.WithCancelOf(context.WithoutCancel(parent), parent)
	done := make(chan error, 1)
	go func() {
		_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "k"}}})
		done <- err
	}()
	if client.Cancelled(ctx) {
		t.Fatal("Cancelled before the parent ended")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the call ended with %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the call did not end when its parent did")
	}
	if ctx.Err() != nil || !client.Cancelled(ctx) {
		t.Errorf("ctx.Err() = %v, Cancelled = %v: want the context itself alive, its calls cancelled", ctx.Err(), client.Cancelled(ctx))
	}
}
