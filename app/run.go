package app

import (
	"context"
	"io"
)

// Run runs the server, or the command named in args, until ctx ends: the
// binary's main. env is the process environment, read once (ReadEnv).
// Serving is: LoadConfig, App.Open, App.Serve (until ctx ends, or the
// server stops by itself; then App.Close).
func Run(ctx context.Context, env Env, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, err := LoadConfig(args, env, stderr)
	if err != nil {
		return err
	}
	log, err := c.Logger(stderr)
	if err != nil {
		return err
	}
	if c.Command != "" {
		return runCommand(ctx, c, stdin, stdout, stderr, log)
	}
	a := &App{Config: c, Log: log, Stdout: stdout}
	if err := a.Open(ctx); err != nil {
		return err
	}
	return a.Serve(ctx)
}

// Serve waits until ctx ends, or until the server stops by itself (its
// error is then Serve's), and closes the App.
func (a *App) Serve(ctx context.Context) error {
	select {
	case err := <-a.Done():
		_ = a.Close()
		return err
	case <-ctx.Done():
	}
	a.Log.Info("shutting down")
	return a.Close()
}
