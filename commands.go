package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
)

// usage prints -h: the commands, the flags and the environment variables.
func usage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `Usage: taskgraph [flags] [command]

Serves the task-manager GraphQL API (POST /query, the GraphQL IDE at /,
GET /healthz) on -addr: 127.0.0.1:8080 (this machine only) by default, :8080
with -production. With no AWS configuration the data lives in an embedded
store, kept in -data-dir across restarts.

Commands:
  token USER   print a bearer token (-max-token-lifetime: 30 days outside production) for USER, signed with JWT_SECRET
               or the development secret in -data-dir
  export       write every item of the table to stdout (JSON lines)
  import       read items written by export from stdin into the table
               (export from the embedded store, import with
               AWS_ENDPOINT_URL_DYNAMODB set: moves the data to DynamoDB;
               on -data-dir, with no server running there: one process
               holds a data directory at a time)

Flags:
`)
	fs.PrintDefaults()
	fmt.Fprint(w, `
Environment:
  PORT                       HTTP port (default 8080)
  HOST                       the host -addr listens on (default 127.0.0.1, loopback only;
                             every interface with -production; 0.0.0.0: every interface)
  ALLOWED_HOSTS              the default of -allowed-hosts
  TABLE_NAME                 the DynamoDB table (default task-manager)
  DATA_DIR                   the default of -data-dir (set but empty: memory only)
  LOG_FORMAT, LOG_LEVEL      the defaults of -log-format and -log-level
  JWT_SECRET                 HS256 secret for bearer tokens; unset: the development
                             secret in -data-dir (made on first start)
  JWT_JWKS_URL               an identity provider's JWK Set for asymmetric tokens
  JWT_ISSUER, JWT_AUDIENCE   the iss / aud tokens must carry
  CURSOR_KEY                 the default of -cursor-key: the key of the live events'
                             cursors (base64 or hex, at least 32 bytes); unset: derived
                             from JWT_SECRET or the development secret; needed with
                             -production when only JWT_JWKS_URL is set
  NATS_URL                   the default of -nats-url: a NATS server or cluster with
                             JetStream that carries live events between instances
  AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL, AWS_REGION, AWS_DEFAULT_REGION,
  AWS_PROFILE, AWS_ACCESS_KEY_ID
                             any of them: use DynamoDB through the AWS SDK's own
                             configuration instead of the embedded store
                             (-store=auto)
`)
}

// runCommand runs the command named in the settings.
func runCommand(ctx context.Context, s settings, stdin io.Reader, stdout, stderr io.Writer, log *slog.Logger) error {
	switch s.command {
	case "token":
		return tokenCommand(s, stdout)
	case "export":
		if len(s.args) != 0 {
			return errors.New("export takes no arguments: go run . export > dump.jsonl")
		}
		store, _, _, closeStore, err := openStore(ctx, s, log)
		if err != nil {
			return err
		}
		defer closeStore()
		n, err := store.Export(ctx, stdout)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "exported %d items of table %s\n", n, s.table)
		return nil
	case "import":
		if len(s.args) != 0 {
			return errors.New("import takes no arguments: go run . import < dump.jsonl")
		}
		items, err := dynamo.ReadDump(stdin)
		if err != nil {
			return fmt.Errorf("reading the dump from stdin: %w (nothing imported)", err)
		}
		store, data, _, closeStore, err := openStore(ctx, s, log)
		if err != nil {
			return err
		}
		defer closeStore()
		if err := store.PutItems(ctx, items); err != nil {
			return err
		}
		if data != nil {
			if _, err := data.Save(ctx); err != nil {
				return err
			}
		}
		fmt.Fprintf(stderr, "imported %d items into table %s\n", len(items), s.table)
		return nil
	}
	return fmt.Errorf("unknown command %q: the commands are token, export and import (see -h)", s.command)
}

// tokenCommand prints a token for the user named in its one argument.
func tokenCommand(s settings, stdout io.Writer) error {
	if len(s.args) != 1 {
		return errors.New("token takes one user id: go run . token bob")
	}
	user := s.args[0]
	if err := domain.ValidUserID(user); err != nil {
		return fmt.Errorf("%q is no valid user id: %s", user, domain.ErrorMessage(err))
	}
	secret := []byte(s.secret)
	if s.secret == "" {
		if os.Getenv("JWT_JWKS_URL") != "" {
			return errors.New("JWT_JWKS_URL is set and JWT_SECRET is not: tokens come from your identity provider")
		}
		if s.dataDir == "" {
			return errors.New("neither JWT_SECRET nor a data directory (-data-dir is empty): no secret to sign with")
		}
		var err error
		if secret, _, err = devSecret(s.dataDir); err != nil {
			return err
		}
	}
	tok, err := (&graph.Authenticator{Secret: secret, MaxLifetime: s.tokenTTL}).Sign(user, s.tokenTTL)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}
