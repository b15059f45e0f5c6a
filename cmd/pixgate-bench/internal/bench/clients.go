package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Fees of the clients CreateClients makes, as `pixgate clients create`
// flags (0.99 % on cash-in, R$ 0.50 per payout), so that the check has
// taxes to account for.
const (
	CreatedCashinFeePercent = "0.99"
	CreatedPayoutFeeFixed   = "0.50"
)

// PixgateCommand names the pixgate binary that creates clients: the path
// given, else a pixgate beside this executable, else pixgate on the PATH.
func PixgateCommand(path string) string {
	if path != "" {
		return path
	}
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), "pixgate"); isFile(p) {
			return p
		}
	}
	return "pixgate"
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// CreateClients creates n clients by running `pixgate clients create` n
// times against the running server's database (databaseURL and env; when
// empty, pixgate's own defaults and PIXGATE_* variables apply) and returns
// their credentials.
func CreateClients(ctx context.Context, pixgate, databaseURL, env string, n int, tag string) ([]Credential, error) {
	if err := checkSQLiteExists(databaseURL); err != nil {
		return nil, fmt.Errorf("create clients: %w", err)
	}
	var global []string
	if databaseURL != "" {
		global = append(global, "--database-url", databaseURL)
	}
	if env != "" {
		global = append(global, "--env", env)
	}
	out := make([]Credential, 0, n)
	for i := 0; i < n; i++ {
		args := append([]string{"clients", "create", "--name", fmt.Sprintf("bench-%s-%d", tag, i+1),
			"--cashin-fee-percent", CreatedCashinFeePercent, "--payout-fee-fixed", CreatedPayoutFeeFixed}, global...)
		cmd := exec.CommandContext(ctx, pixgate, args...) //nolint:gosec // G204: the pixgate binary the operator chose to measure.
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("create clients: %s clients create: %w: %s", pixgate, err, strings.TrimSpace(stderr.String()))
		}
		var cred struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &cred); err != nil {
			return nil, fmt.Errorf("create clients: %s clients create printed no JSON: %w: %q", pixgate, err, stdout.String())
		}
		if cred.ClientID == "" || cred.ClientSecret == "" {
			return nil, fmt.Errorf("create clients: %s clients create printed no credentials: %q", pixgate, stdout.String())
		}
		out = append(out, Credential{ID: cred.ClientID, Secret: cred.ClientSecret})
	}
	return out, nil
}

// checkSQLiteExists refuses a SQLite database file that does not exist:
// pixgate would create an empty one, and the run would then use clients the
// server under test has never heard of.
func checkSQLiteExists(databaseURL string) error {
	if databaseURL == "" || strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://") {
		return nil
	}
	path := databaseURL
	for _, prefix := range []string{"sqlite://", "sqlite:"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			path = rest
			break
		}
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("database %s: %w (give the running server's --database-url)", path, err)
	}
	return nil
}
