// Command taskgraph serves the task-manager GraphQL API. With no AWS
// configuration it runs on an embedded in-process store with demo data; see
// README.md for the settings.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/ide"
	"github.com/taskgraph/taskgraph/internal/wire"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

func main() {
	env := readEnv()     // the one read of the environment (settings.go)
	wire.TuneGC(env.get) // GC defaults for a container: GOMEMLIMIT and GOGC override
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, env, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskgraph:", err)
		os.Exit(1)
	}
}

// run runs the server, or the command named in args, until ctx ends.
func run(ctx context.Context, env environment, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return runServing(ctx, env, args, stdin, stdout, stderr, nil)
}

// runServing is run that hands the started instance to serving (when not
// nil) once it serves: its URL and demo token are fields of the wire.App.
// Serving is: the settings, App.Open, serve until ctx ends (or the server
// stops by itself), App.Close.
func runServing(ctx context.Context, env environment, args []string, stdin io.Reader, stdout, stderr io.Writer, serving func(*wire.App)) error {
	s, err := loadSettings(args, env, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(s.logFormat, s.logLevel, stderr)
	if err != nil {
		return err
	}
	if s.command != "" {
		return runCommand(ctx, s, stdin, stdout, stderr, log)
	}
	app := &App{Settings: s, Log: log, Stdout: stdout}
	if err := app.Open(ctx); err != nil {
		return err
	}
	if serving != nil {
		serving(app.Instance)
	}
	select {
	case err := <-app.Instance.Done(): // the server stopped by itself: its error is the one to tell
		_ = app.Close()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	return app.Close()
}

// newMux routes the server's paths around o's /query handler
// (wire.NewHandler), behind the Host check of a server started without
// -addr or -allowed-hosts: see routes.
func newMux(o graph.Options, headers map[string]string) http.Handler {
	hosts, _ := newHostCheck(o.Production, "", "", o.Log)
	return routes(o.Store, nil, o.Production, headers, hosts, wire.NewHandler(o.Store, o.Auth, web.Options{Options: o}))
}

// routes routes the server's paths: /query (GraphQL), GET / (the GraphiQL
// IDE, with headers pre-filled, and its assets under /ide/; not in
// production) and GET /healthz (web.Health: the table, and broker's
// state when broker is not nil), every one behind the Host check hosts
// (healthz open to any Host).
func routes(store *dynamo.Store, broker func() *live.Broker, production bool, headers map[string]string, hosts *hostCheck, query http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/query", query)
	if !production {
		mux.Handle("GET /{$}", ide.Page("taskgraph", "/query", headers, ide.Example))
		mux.Handle("GET "+ide.Prefix, ide.Assets())
	}
	mux.Handle("GET "+healthPath, web.Health(store.Ping, broker))
	return hosts.handler(mux)
}

// awsConfig loads the SDK's own configuration. For a local endpoint
// (AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL) without credentials or
// region (e, from the environment read once) it fills in placeholders, as DynamoDB Local and dynalite accept any.
func awsConfig(ctx context.Context, e awsEnv) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if e.local && !e.region {
		opts = append(opts, config.WithRegion("us-east-1"))
	}
	if e.local && !e.credentials {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	return cfg, nil
}
