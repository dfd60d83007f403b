// Command taskgraph serves the task-manager GraphQL API. With no AWS
// configuration it runs on an embedded in-process store with demo data; see
// README.md for the settings. The process itself (its settings, the App
// that opens and closes everything, the commands) is package app.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/taskgraph/taskgraph/app"
)

func main() {
	env := app.ReadEnv() // the one read of the environment
	app.TuneGC(env.Get)  // GC defaults for a container: GOMEMLIMIT and GOGC override
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.Run(ctx, env, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskgraph:", err)
		os.Exit(1)
	}
}
