// Command powercontext is the powercontext server and its migration tool; see `powercontext --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/powercontext/powercontext/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
