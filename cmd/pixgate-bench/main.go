// Command pixgate-bench is pixgate's load generator: it drives a running
// pixgate server (sandbox) with a weighted mix of operations, reports
// throughput and latency, and checks every acknowledged operation through
// the API. It is a tool beside the product, not part of the pixgate binary;
// see BENCHMARKS.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pixgate/pixgate/cmd/pixgate-bench/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := bench.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
