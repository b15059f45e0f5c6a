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
	var db *store.DB
	var err error
	if strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://") {
		db, err = postgres.Open(ctx, databaseURL, 2)
	} else {
		path := sqlite.Path(databaseURL)
		if _, serr := os.Stat(path); serr != nil {
			return nil, fmt.Errorf("create clients: database %s: %w (give the running server's --database-url)", path, serr)
		}
		db, err = sqlite.Open(ctx, path)
	}
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
