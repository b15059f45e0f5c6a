package sim_test

import (
	"bytes"
	"encoding/csv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/sim"
)

// TestOpenLoopSQLite runs the open-loop measurement briefly on one SQLite
// node: every payout offered is accepted, reaches the PSP and is reported
// paid to the merchant, and the report's figures are consistent (its
// timing is what the measurement is for, not what this test checks).
func TestOpenLoopSQLite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts pixgate processes")
	}
	var trace bytes.Buffer
	r, err := sim.OpenLoop(t.Context(), sim.OpenLoopConfig{DB: "sqlite", Pixgate: buildPixgate(t), Dir: t.TempDir(),
		Rate: 20, For: 3 * time.Second, Latency: 20 * time.Millisecond, Trace: &trace})
	require.NoError(t, err)
	t.Log(r)

	require.Equal(t, 60, r.Payouts)
	require.Equal(t, r.Payouts, r.Accepted, "every payout accepted")
	require.Equal(t, 0, r.Unpaid, "every payout reported paid")
	require.Equal(t, 0, r.Failed)
	require.NotEqual(t, sim.Never, r.ToPSP["max"], "every payout reached the PSP")
	require.NotEqual(t, sim.Never, r.ToPaid["max"])
	require.Positive(t, r.Accept["p50"])
	require.Positive(t, r.ToPaid["p50"], "paid after accepted")
	require.LessOrEqual(t, r.ToPSP["p50"], r.ToPaid["p50"], "sent before paid")
	require.LessOrEqual(t, r.Accept["p50"], r.Accept["p99"])
	require.LessOrEqual(t, r.ToPaid["p99"], r.ToPaid["max"])
	for _, v := range []float64{r.AcceptRate, r.SendRate, r.PaidRate} {
		require.Positive(t, v)
	}
	require.Equal(t, "at once (settle delay 0)", r.Settle)

	rows, err := csv.NewReader(&trace).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+r.Payouts, "a header and a line per payout")
	for _, row := range rows[1:] {
		for j, v := range row {
			require.NotEmpty(t, v, "payout %s, column %s", row[0], rows[0][j])
		}
	}
}
