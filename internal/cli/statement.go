package cli

import (
	"context"

	"github.com/pixgate/pixgate/internal/gateway"
)

// statementCmd is pixgate statement: one client's statement, as the API's
// GET /api/v1/wallet/statement answers it.
type statementCmd struct {
	Client string `required:"" help:"Client id."`
	From   string `required:"" help:"Start of the window (inclusive), RFC 3339: 2026-11-01T00:00:00-03:00."`
	To     string `required:"" help:"End of the window (exclusive), RFC 3339; at most 366 days after --from."`
	Format string `default:"json" help:"json (the API's body) or csv (RFC 4180, a header row)."`
}

// statement writes client s.Client's statement for the window to stdout,
// streamed: the exact body GET /api/v1/wallet/statement answers with. An
// unknown client or a bad window is an error before anything is written;
// an error while streaming leaves stdout truncated, and the exit code
// says so.
func (a *app) statement(ctx context.Context, s statementCmd) error {
	return a.withGateway(ctx, func(gw *gateway.Service) error {
		c, err := gw.Client(ctx, s.Client)
		if err != nil {
			return err
		}
		st, err := gw.Statement(ctx, c, gateway.StatementQuery{From: s.From, To: s.To, Format: s.Format})
		if err != nil {
			return err
		}
		return st.Write(ctx, a.stdout)
	})
}
