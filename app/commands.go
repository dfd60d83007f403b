package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

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
		if s.jwksURL != "" {
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
	tok, err := (&auth.Authenticator{Secret: secret, MaxLifetime: s.tokenTTL}).Sign(user, s.tokenTTL)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}
