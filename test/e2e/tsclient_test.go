package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// tsTools is the directory of the pinned npm tools (test/tsclient, installed
// by `npm ci` there; .ci/run does it). Without node or the installed
// packages the test is skipped, except under CI=true, where it fails.
func tsTools(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "tsclient"))
	require.NoError(t, err)
	var missing []string
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node")
	}
	for _, pkg := range []string{"@redocly/cli", "openapi-typescript", "typescript", "@types/node"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			missing = append(missing, pkg)
		}
	}
	if len(missing) > 0 {
		msg := "missing " + strings.Join(missing, ", ") + ": run `npm ci` in test/tsclient (node 20.19 or later)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// node runs a node program in dir with the given extra environment and
// returns its stdout; a non-zero exit fails the test with both outputs.
func node(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	// The tools ask nothing of the network: no telemetry, no update check.
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_UPDATE_NOTIFIER=1")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, err, "node %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stdout.String(), stderr.String())
	return stdout.String()
}

// TestOpenAPILint lints the OpenAPI document with Redocly's recommended
// rules (test/tsclient/redocly.yaml): no error and no warning, since a
// warning there is something a generated client gets wrong.
func TestOpenAPILint(t *testing.T) {
	t.Parallel()
	dir := tsTools(t)
	doc, err := filepath.Abs(filepath.Join("..", "..", "internal", "httpapi", "openapi.yaml"))
	require.NoError(t, err)
	out := node(t, dir, nil, filepath.Join("node_modules", "@redocly", "cli", "bin", "cli.js"), "lint", "--format=json", doc)
	var report struct {
		Totals struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
		} `json:"totals"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &report), out)
	for _, p := range report.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		t.Errorf("%s at %s: %s", p.RuleID, where, p.Message)
	}
	require.Zero(t, report.Totals.Errors+report.Totals.Warnings, "lint problems")
}

// tsChecks is compiled with the README's examples: each @ts-expect-error
// line must fail to type-check (tsc fails on a directive that is not
// needed), and the rest must compile, so the generated types refuse what
// the server refuses and require what it always sends.
const tsChecks = `
// @ts-expect-error a lookup names payment_id or external_id
const noIdentifier: Schemas["LookupRequest"] = {};
// @ts-expect-error a refund names its charge
const noCharge: Schemas["RefundRequest"] = { amount: 1, reason: "x" };
// @ts-expect-error a key's alternative needs the key
const noKey: Schemas["PayoutRequest"]["creditParty"] = { keyType: "EMAIL" };
const defaultDays: Schemas["Due"] = { date: "2099-12-10" }; // days_after is optional
const email: Schemas["PayoutRequest"]["creditParty"] = { keyType: "EMAIL", key: "a@example.com" };
// Fields every webhook body carries are not optional.
function describe(e: Schemas["WebhookEvent"]): string {
  const kind: string = e.type;
  return kind + " " + e.tax.toFixed(2) + " " + (e.external_id ?? "-");
}
void [noIdentifier, noCharge, noKey, defaultDays, email, describe];

// What the examples above did, as the server answered it.
function expect(ok: boolean, what: string): void {
  if (!ok) {
    throw new Error("unexpected: " + what);
  }
}
expect(charge.status === "PENDING", "a new charge is PENDING");
expect(paid.data.status === "PAID", "the sandbox paid the charge");
expect(found.data.payment_id === charge.payment_id && found.data.status === "PAID", "the lookup finds it PAID");
expect(history.data.some((t) => t.payment_id === charge.payment_id), "the history lists it");
expect(balance.data.available_cents === 2590, "the balance holds R$ 25.90");
expect(payout.status === "PENDING" && payout.amount === 10, "the payout is accepted");
expect(refund.status === "PENDING" && refund.amount === 5.9, "the refund is accepted");
console.log("tour " + JSON.stringify({ payment_id: charge.payment_id, payout: payout.transaction_id, refund: refund.refund_id }));
`

// TestTypeScriptClient generates the TypeScript types of the OpenAPI
// document with openapi-typescript (as the README says), compiles the
// README's TypeScript examples with them in strict mode, and runs them with
// node against a sandbox `pixgate serve` on each database: charge, sandbox
// pay, balance, lookup, history, payout and refund.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	tools := tsTools(t)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```ts\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	require.GreaterOrEqual(t, len(blocks), 4, "the README's TypeScript examples")
	var src strings.Builder
	for _, b := range blocks {
		src.WriteString(b[1])
		src.WriteString("\n")
	}
	src.WriteString(tsChecks)

	work := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(work, "tour.ts"), []byte(src.String()), 0o600))
	tsconfig := map[string]any{
		"compilerOptions": map[string]any{
			"strict": true, "target": "es2022", "module": "es2022", "moduleResolution": "bundler",
			"lib": []string{"es2022"}, "types": []string{"node"},
			"typeRoots":     []string{filepath.Join(tools, "node_modules", "@types")},
			"outDir":        "out",
			"noEmitOnError": true, "skipLibCheck": true,
		},
		"files": []string{"tour.ts"},
	}
	raw, err := json.Marshal(tsconfig)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(work, "tsconfig.json"), raw, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(work, "package.json"), []byte(`{"type": "module"}`), 0o600))

	// The types of the document every server serves (GET /openapi.yaml
	// is this file), then the examples compiled against them, once.
	doc, err := filepath.Abs(filepath.Join("..", "..", "internal", "httpapi", "openapi.yaml"))
	require.NoError(t, err)
	node(t, work, nil, filepath.Join(tools, "node_modules", "openapi-typescript", "bin", "cli.js"), doc, "-o", "pixgate.d.ts")
	node(t, work, nil, filepath.Join(tools, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json")

	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		s := startServe(t, db)
		sb := testkit.DecodeOne(t, s.stdout.String(), testkit.ServeKeys...)
		out := node(t, work, []string{"PIXGATE_URL=http://" + s.addr, "STPI=" + sb.ClientID, "STPS=" + sb.ClientSecret},
			filepath.Join("out", "tour.js"))
		m := regexp.MustCompile(`(?m)^tour (\{.*\})$`).FindStringSubmatch(out)
		require.NotNil(t, m, "the tour's last line; stdout:\n%s", out)
		var ids struct {
			PaymentID string `json:"payment_id"`
			Payout    string `json:"payout"`
			Refund    string `json:"refund"`
		}
		require.NoError(t, json.Unmarshal([]byte(m[1]), &ids))
		// What the tour did is in the server: the charge paid (and being
		// refunded), the payout and the refund recorded.
		store := testkit.OpenURL(t, db)
		tx, err := store.TransactionByID(t.Context(), ids.PaymentID)
		require.NoError(t, err)
		require.Equal(t, "PAID", string(tx.Status))
		_, err = store.TransactionByID(t.Context(), ids.Payout)
		require.NoError(t, err)
		require.NotEmpty(t, ids.Refund)
	})
}
