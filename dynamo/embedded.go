package dynamo

import (
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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

// Client returns an SDK client for the embedded store.
func (e *Embedded) Client(opts ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(e.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	}, opts...)
}

// Close stops the embedded store at once, dropping its connections; its
// data is gone.
func (e *Embedded) Close() error { return e.http.Close() }
