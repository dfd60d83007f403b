// Package embedded is the development and test store: the table engine of
// package engine (B-trees of items, minidyn's expression interpreter)
// served as DynamoDB's HTTP protocol on a loopback port and reached
// through the ordinary SDK client.
package embedded

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/taskgraph/taskgraph/dynamo/embedded/engine"
)

// Store is an in-process DynamoDB-compatible store (package engine)
// served on a loopback port, reached through the ordinary SDK client: the
// code that runs against it is the code that runs against AWS.
type Store struct {
	// Server is the engine's HTTP handler: every call passes through its
	// ServeHTTP; tests emulate failures with it.
	Server *engine.Server
	// Endpoint is its URL.
	Endpoint string
	http     *http.Server

	gate     sync.RWMutex                          // writes hold it shared; HoldWrites exclusively
	writes   atomic.Uint64                         // write calls served
	journal  atomic.Pointer[journal]               // nil until StartJournal (journal.go)
	faults   atomic.Pointer[func(op string) error] // InjectJournalFault
	stepHook atomic.Pointer[func(step string)]     // OnSnapshotStep
	grown    growth                                // JournalGrowth
}

// LoadItems stores items (each an item in DynamoDB's JSON: its attributes'
// object) in the table straight into the engine, each over any item with
// its key (engine.Engine.Load): a start's snapshot, without calls. It is
// not journaled; an item that is not valid is an *engine.LoadError and
// nothing is stored.
func (e *Store) LoadItems(table string, items [][]byte) error {
	e.gate.RLock()
	defer e.gate.RUnlock()
	err := e.Server.Engine().Load(table, items)
	if err == nil {
		e.writes.Add(1)
	}
	return err
}

// View returns the table as it is now, which later writes do not change
// (engine.View), in O(1). Taken while writes are held (HoldWrites), it is
// the table at that point of the journal.
func (e *Store) View(table string) (*engine.View, error) {
	return e.Server.Engine().View(table)
}

// ItemCount is the number of items in the table.
func (e *Store) ItemCount(table string) (int, error) {
	return e.Server.Engine().ItemCount(table)
}

// Start starts an embedded store on a free loopback port.
func Start() (*Store, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e := &Store{Server: engine.NewServer(), Endpoint: "http://" + ln.Addr().String()}
	e.http = &http.Server{Handler: http.HandlerFunc(e.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = e.http.Serve(ln) }()
	return e, nil
}

// serve passes calls on to the engine, counting the writes, and holding them
// back while HoldWrites is in force. With a journal (StartJournal), a
// write is answered once it is journaled, and one the journal cannot keep
// is not applied (nor counted): every write to the store passes here.
func (e *Store) serve(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	switch target[strings.LastIndexByte(target, '.')+1:] {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems",
		"CreateTable", "UpdateTable", "DeleteTable", "UpdateTimeToLive":
		e.gate.RLock()
		defer e.gate.RUnlock()
		if j := e.journal.Load(); j != nil {
			if e.journaled(j, w, r) {
				e.writes.Add(1)
			}
			return
		}
		defer e.writes.Add(1)
	}
	e.Server.ServeHTTP(w, r)
}

// Writes returns how many write calls the store has served: a change in
// the count means the data may have changed.
func (e *Store) Writes() uint64 { return e.writes.Load() }

// HoldWrites waits for the write calls in progress, then holds back new
// ones until the returned function is called: reads in between see one
// point in time (a consistent snapshot).
func (e *Store) HoldWrites() (release func()) {
	e.gate.Lock()
	return e.gate.Unlock
}

// Client returns an SDK client for the embedded store. The embedded store
// has no time to live: the client does not send UpdateTimeToLive, it answers
// ErrNoTTL itself (see EnsureTable).
func (e *Store) Client(opts ...func(*dynamodb.Options)) *dynamodb.Client {
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

// Close stops the embedded store at once, dropping its connections, and
// closes its journal; the data is gone from memory.
func (e *Store) Close() error {
	err := e.http.Close()
	if jerr := e.closeJournal(); err == nil {
		err = jerr
	}
	return err
}
