package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/postgres"
	"github.com/pixgate/pixgate/internal/store/sqlite"
)

// Fees of the clients CreateClients makes: 0.99 % on cash-in, R$ 0.50 per
// payout, so that the check has taxes to account for.
var (
	CreatedCashinFee = pix.FeeRule{PercentBP: 99}
	CreatedPayoutFee = pix.FeeRule{Fixed: 50}
)

// CreateClients creates n clients in the database at databaseURL (the
// running server's own, already migrated), in environment env, as
// `pixgate clients create` does, and returns their credentials.
func CreateClients(ctx context.Context, databaseURL, env string, n int, tag string) ([]Credential, error) {
	db, err := openServerDB(ctx, databaseURL)
	if err != nil {
		return nil, fmt.Errorf("create clients: %w", err)
	}
	defer db.Close()
	gw := gateway.New(db, env, gateway.Merchant{}, 24*time.Hour, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	out := make([]Credential, 0, n)
	for i := 0; i < n; i++ {
		cred, err := gw.CreateClient(ctx, gateway.ClientParams{Name: fmt.Sprintf("bench-%s-%d", tag, i+1),
			CashinFee: CreatedCashinFee, PayoutFee: CreatedPayoutFee})
		if err != nil {
			return nil, fmt.Errorf("create clients: %w", err)
		}
		out = append(out, Credential{ID: cred.ClientID, Secret: cred.ClientSecret})
	}
	return out, nil
}

// openServerDB opens the running server's database (already migrated).
func openServerDB(ctx context.Context, databaseURL string) (*store.DB, error) {
	if strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://") {
		return postgres.Open(ctx, databaseURL, 2)
	}
	path := sqlite.Path(databaseURL)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("database %s: %w (give the running server's --database-url)", path, err)
	}
	return sqlite.Open(ctx, path)
}
