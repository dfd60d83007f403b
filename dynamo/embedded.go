package dynamo

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	miniserver "github.com/truora/minidyn/server"
)

// Embedded is an in-process DynamoDB-compatible store (minidyn) served on a
// loopback port, reached through the ordinary SDK client: the code that
// runs against it is the code that runs against AWS.
type Embedded struct {
	// Server is the minidyn server, for failure emulation in tests.
	Server *miniserver.Server
	// Endpoint is its URL.
	Endpoint string
	http     *http.Server
}

// StartEmbedded starts an embedded store on a free loopback port.
func StartEmbedded() (*Embedded, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e := &Embedded{Server: miniserver.NewServer(), Endpoint: "http://" + ln.Addr().String()}
	e.http = &http.Server{Handler: e.Server, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = e.http.Serve(ln) }()
	return e, nil
}

// Client returns an SDK client for the embedded store. The embedded store
// has no time to live: the client does not send UpdateTimeToLive, it answers
// ErrNoTTL itself (see EnsureTable).
func (e *Embedded) Client(opts ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(e.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	}, append([]func(*dynamodb.Options){noTTL}, opts...)...)
}

// ErrNoTTL is the answer of an embedded store's client to UpdateTimeToLive,
// which the embedded store does not implement.
var ErrNoTTL = errors.New("the embedded store has no time to live")

// noTTL is a client option: UpdateTimeToLive is answered ErrNoTTL without
// being sent.
func noTTL(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("taskgraphNoTTL",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if awsmiddleware.GetOperationName(ctx) == "UpdateTimeToLive" {
					return middleware.InitializeOutput{}, middleware.Metadata{}, ErrNoTTL
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
}

// Close stops the embedded store at once, dropping its connections; its
// data is gone.
func (e *Embedded) Close() error { return e.http.Close() }
