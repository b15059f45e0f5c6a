// Command pixgate is the PIX payment gateway: API server, migrations and
// client administration. See the README.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pixgate/pixgate/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
