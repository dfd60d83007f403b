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

// runCommand runs the command named in the configuration.
func runCommand(ctx context.Context, c Config, stdin io.Reader, stdout, stderr io.Writer, log *slog.Logger) error {
	switch c.Command {
	case "token":
		return tokenCommand(c, stdout)
	case "export":
		if len(c.Args) != 0 {
			return errors.New("export takes no arguments: go run . export > dump.jsonl")
		}
		t, err := OpenTable(ctx, c, log)
		if err != nil {
			return err
		}
		defer t.Close()
		n, err := t.Store.Export(ctx, stdout)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "exported %d items of table %s\n", n, c.Table)
		return nil
	case "migrate":
		if len(c.Args) != 0 {
			return errors.New("migrate takes no arguments: go run . migrate")
		}
		t, err := OpenTable(ctx, c, log) // EnsureTable: the missing indexes, then the backfills
		if err != nil {
			return err
		}
		t.Close()
		fmt.Fprintf(stderr, "table %s has every index and backfill of this version\n", c.Table)
		return nil
	case "import":
		if len(c.Args) != 0 {
			return errors.New("import takes no arguments: go run . import < dump.jsonl")
		}
		items, err := dynamo.ReadDump(stdin)
		if err != nil {
			return fmt.Errorf("reading the dump from stdin: %w (nothing imported)", err)
		}
		t, err := OpenTable(ctx, c, log)
		if err != nil {
			return err
		}
		defer t.Close()
		if err := t.Store.PutItems(ctx, items); err != nil {
			return err
		}
		if t.Data != nil {
			if _, err := t.Data.Save(ctx); err != nil {
				return err
			}
		}
		fmt.Fprintf(stderr, "imported %d items into table %s\n", len(items), c.Table)
		return nil
	}
	return fmt.Errorf("unknown command %q: the commands are token, export, import and migrate (see -h)", c.Command)
}

// tokenCommand prints a token for the user named in its one argument.
func tokenCommand(c Config, stdout io.Writer) error {
	if len(c.Args) != 1 {
		return errors.New("token takes one user id: go run . token bob")
	}
	user := c.Args[0]
	if err := domain.ValidUserID(user); err != nil {
		return fmt.Errorf("%q is no valid user id: %s", user, domain.ErrorMessage(err))
	}
	secret := []byte(c.Secret)
	if c.Secret == "" {
		if c.JWKSURL != "" {
			return errors.New("JWT_JWKS_URL is set and JWT_SECRET is not: tokens come from your identity provider")
		}
		if c.DataDir == "" {
			return errors.New("neither JWT_SECRET nor a data directory (-data-dir is empty): no secret to sign with")
		}
		var err error
		if secret, _, err = devSecret(c.DataDir); err != nil {
			return err
		}
	}
	tok, err := (&auth.Authenticator{Secret: secret, MaxLifetime: c.TokenTTL}).Sign(user, c.TokenTTL)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}
