package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestStatementRandomConcurrent runs a seeded random mix of paid charges,
// payouts (completed, failed, returned, refused for insufficient balance),
// settlements and refunds (completed and failed) for a few clients with
// fees, all at once, while statements are read; then checks every
// client's statement: the full window from 0 to the balance with running
// balances that chain and never go below zero, windows cut at random
// points that chain and add up to the full one line for line, lines only
// of the client's own transactions, and the ledger consistent. Set
// PIXGATE_STATEMENT_SEED to replay a run.
func TestStatementRandomConcurrent(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("PIXGATE_STATEMENT_SEED"); v != "" {
		_, err := fmt.Sscan(v, &seed)
		require.NoError(t, err)
	}
	t.Logf("seed %d (PIXGATE_STATEMENT_SEED=%d replays it)", seed, seed)
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		runStatementRandom(t, open, seed)
	})
}

// randomClient is one client of the random run and what was done for it.
type randomClient struct {
	c pix.Client
	// mu guards the fields below.
	mu sync.Mutex
	// ids are the client's charges, payouts and refunds.
	ids map[string]bool
	// paid are its paid charges, for refunds.
	paid []string
	// count is how many lines of each principal type (not the fees) the
	// actions must produce once all settled.
	count map[string]int
	// refused counts the payouts and refunds refused (no balance, or
	// nothing left to refund).
	refused int
}

// add records the client's transaction id, which must make one line of
// each of types; no id records a refused payout or refund.
func (rc *randomClient) add(id string, types ...string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if id == "" {
		rc.refused++
		return
	}
	rc.ids[id] = true
	for _, typ := range types {
		rc.count[typ]++
	}
}

func runStatementRandom(t *testing.T, open testkit.Opener, seed uint64) {
	ctx := context.Background()
	db := open(t)
	s, err := gateway.New(gateway.Config{DB: db, Env: "sandbox", ChargeTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Provider: sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife", Delay: 2 * time.Millisecond})})
	require.NoError(t, err)
	master := rand.New(rand.NewPCG(seed, 0x5747))
	start := time.Now().Add(-time.Second)

	const nClients, workersPerClient, opsPerWorker = 3, 2, 40
	clients := make([]*randomClient, nClients)
	for i := range clients {
		cred, err := createClient(ctx, db, s, clientParams{Name: fmt.Sprint("rnd-", i),
			CashinFee: pix.FeeRule{PercentBP: master.Int64N(300), Fixed: pix.Amount(master.Int64N(50))},
			PayoutFee: pix.FeeRule{PercentBP: master.Int64N(100), Fixed: pix.Amount(master.Int64N(30))}})
		require.NoError(t, err)
		c, err := s.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
		require.NoError(t, err)
		clients[i] = &randomClient{c: c, ids: map[string]bool{}, count: map[string]int{}}
	}

	// The writers: per client, workers each doing a random sequence of
	// actions; one settler; one reader of statements.
	var writers sync.WaitGroup
	errs := make(chan error, nClients*workersPerClient+2)
	for ci, rc := range clients {
		for w := range workersPerClient {
			r := rand.New(rand.NewPCG(seed, uint64(ci*100+w+1)))
			writers.Add(1)
			go func() {
				defer writers.Done()
				for op := range opsPerWorker {
					if err := randomAction(ctx, s, rc, r, fmt.Sprintf("%d-%d-%d", ci, w, op)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	stop := make(chan struct{})
	var background sync.WaitGroup
	background.Add(2)
	go func() {
		defer background.Done()
		for {
			if _, err := s.Transfers().StepDue(ctx, pix.TransferPayout, 100); err != nil {
				errs <- fmt.Errorf("settle payouts: %w", err)
				return
			}
			if _, err := s.Transfers().StepDue(ctx, pix.TransferRefund, 100); err != nil {
				errs <- fmt.Errorf("settle refunds: %w", err)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
		}
	}()
	reads := 0
	go func() {
		defer background.Done()
		r := rand.New(rand.NewPCG(seed, 0xbeef))
		for {
			select {
			case <-stop:
				return
			default:
			}
			rc := clients[r.IntN(len(clients))]
			lines, st, err := statementLines(ctx, s, rc.c, start, time.Now().Add(time.Hour))
			if err == nil {
				err = checkChain(st.Opening, st.Closing, lines)
			}
			if err != nil {
				errs <- fmt.Errorf("statement read during activity: %w", err)
				return
			}
			reads++
		}
	}()
	writers.Wait()
	// Whatever is still due settles (returned payouts come back one
	// PayoutDelay after completing).
	for idle := 0; idle < 3; {
		time.Sleep(5 * time.Millisecond)
		n, err := s.Transfers().StepDue(ctx, pix.TransferPayout, 100)
		require.NoError(t, err)
		m, err := s.Transfers().StepDue(ctx, pix.TransferRefund, 100)
		require.NoError(t, err)
		if n+m == 0 {
			idle++
		} else {
			idle = 0
		}
	}
	close(stop)
	background.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "seed %d", seed)
	}
	require.Positive(t, reads, "statements were read during the activity")
	t.Logf("%d statements read during the activity", reads)
	require.NoError(t, db.CheckLedger(ctx))
	end := time.Now().Add(time.Second)

	for _, rc := range clients {
		t.Run(rc.c.Name, func(t *testing.T) {
			full, st, err := statementLines(ctx, s, rc.c, start, end)
			require.NoError(t, err)
			bal, err := s.Balance(ctx, rc.c)
			require.NoError(t, err)
			require.Equal(t, pix.Amount(0), st.Opening, "seed %d", seed)
			require.Equal(t, bal.Available, st.Closing, "seed %d: the closing balance is the available balance", seed)
			require.NoError(t, checkChain(st.Opening, st.Closing, full), "seed %d", seed)
			count := map[string]int{}
			for _, l := range full {
				require.True(t, rc.ids[l.TransactionID], "seed %d: line %+v is not of a transaction of %s", seed, l, rc.c.ID)
				count[l.Type]++
			}
			for typ, n := range rc.count {
				require.Equal(t, n, count[typ], "seed %d: %s lines", seed, typ)
			}
			t.Logf("%d lines: %v; %d payouts or refunds refused", len(full), count, rc.refused)

			// The JSON body holds the same lines.
			requireJSONLines(t, ctx, s, rc.c, start, end, full)

			// Windows cut at random points (some exactly at a movement's
			// time) chain and hold the full window's lines, in order.
			r := rand.New(rand.NewPCG(seed, uint64(len(rc.c.ID))))
			for range 5 {
				cuts := []time.Time{start, end}
				for range 1 + r.IntN(6) {
					if len(full) > 0 && r.IntN(2) == 0 {
						cuts = append(cuts, full[r.IntN(len(full))].At)
					} else {
						cuts = append(cuts, start.Add(time.Duration(r.Int64N(int64(end.Sub(start))))))
					}
				}
				slices.SortFunc(cuts, func(a, b time.Time) int { return a.Compare(b) })
				cuts = slices.CompactFunc(cuts, time.Time.Equal)
				var joined []gateway.Movement
				opening := pix.Amount(0)
				for i := 1; i < len(cuts); i++ {
					lines, st, err := statementLines(ctx, s, rc.c, cuts[i-1], cuts[i])
					require.NoError(t, err)
					require.Equal(t, opening, st.Opening, "seed %d: window %d of %v opens where the previous closed", seed, i, cuts)
					require.NoError(t, checkChain(st.Opening, st.Closing, lines), "seed %d", seed)
					for _, l := range lines {
						require.False(t, l.At.Before(cuts[i-1]) || !l.At.Before(cuts[i]), "seed %d: line %+v outside [%v, %v)", seed, l, cuts[i-1], cuts[i])
					}
					joined = append(joined, lines...)
					opening = st.Closing
				}
				require.Equal(t, st.Closing, opening, "seed %d", seed)
				require.Equal(t, full, joined, "seed %d: windows cut at %v", seed, cuts)
			}
		})
	}
}

// randomAction does one random thing for rc: a paid charge (most often),
// a payout (completing, failing or returned; sometimes more than the
// balance, refused), or a refund of a paid charge (sometimes failing).
func randomAction(ctx context.Context, s *gateway.Service, rc *randomClient, r *rand.Rand, tag string) error {
	cents := func(n int64) json.RawMessage { return json.RawMessage(fmt.Sprintf("%d.%02d", n/100, n%100)) }
	switch k := r.IntN(10); {
	case k < 4:
		ch, _, err := s.CreateCharge(ctx, rc.c, gateway.Keyed(chargeRequestAmount("c-"+tag, string(cents(100+r.Int64N(5000)))), "", []byte(`{}`)))
		if err != nil {
			return fmt.Errorf("charge: %w", err)
		}
		tr, err := s.Charge(ctx, rc.c, ch.PaymentID)
		if err != nil {
			return fmt.Errorf("charge: %w", err)
		}
		if _, err := s.Sandbox().Pay(ctx, tr); err != nil {
			return fmt.Errorf("pay: %w", err)
		}
		rc.add(ch.PaymentID, "charge")
		rc.mu.Lock()
		rc.paid = append(rc.paid, ch.PaymentID)
		rc.mu.Unlock()
	case k < 8:
		key := []string{"f@example.com", "f@example.com", "x@fail.sandbox", "x@reverse.sandbox"}[r.IntN(4)]
		amount := 1 + r.Int64N(2000)
		if r.IntN(5) == 0 {
			amount = 1_000_000 // more than any balance here
		}
		ext := "p-" + tag
		req := &gateway.PayoutRequest{Amount: cents(amount), Description: "x", CallbackURL: "https://merchant.example.com/p",
			ExternalID: &ext, CreditParty: &pix.CreditParty{Name: "F", KeyType: "EMAIL", Key: key}}
		po, _, err := s.CreatePayout(ctx, rc.c, gateway.Keyed(req, "", []byte(`{}`)))
		if pix.ErrorCode(err) == pix.EInsufficientBalance {
			rc.add("")
			return nil
		}
		if err != nil {
			return fmt.Errorf("payout: %w", err)
		}
		switch key {
		case "x@fail.sandbox":
			rc.add(po.TransactionID, "payout", "payout_failed")
		case "x@reverse.sandbox":
			rc.add(po.TransactionID, "payout", "payout_returned")
		default:
			rc.add(po.TransactionID, "payout")
		}
	default:
		rc.mu.Lock()
		if len(rc.paid) == 0 {
			rc.mu.Unlock()
			return nil
		}
		charge := rc.paid[r.IntN(len(rc.paid))]
		rc.mu.Unlock()
		req := &gateway.RefundRequest{PaymentID: charge}
		if r.IntN(2) == 0 {
			req.Amount = cents(1 + r.Int64N(300))
		}
		if r.IntN(3) == 0 {
			req.Reason = "sandbox:fail"
		}
		ref, _, err := s.CreateRefund(ctx, rc.c, gateway.Keyed(req, "", []byte(`{}`)))
		switch pix.ErrorCode(err) {
		case pix.EInsufficientBalance, pix.EUnprocessable: // refused: no balance, or nothing left to refund
			rc.add("")
			return nil
		}
		if err != nil {
			return fmt.Errorf("refund: %w", err)
		}
		if req.Reason == "sandbox:fail" {
			rc.add(ref.RefundID, "refund", "refund_failed")
		} else {
			rc.add(ref.RefundID, "refund")
		}
	}
	return nil
}

// statementLines reads c's statement of [from, to) and its lines.
func statementLines(ctx context.Context, s *gateway.Service, c pix.Client, from, to time.Time) ([]gateway.Movement, *gateway.Statement, error) {
	st, err := s.Statement(ctx, c, gateway.StatementQuery{From: from.Format(time.RFC3339Nano), To: to.Format(time.RFC3339Nano)})
	if err != nil {
		return nil, nil, err
	}
	var lines []gateway.Movement
	err = st.Each(ctx, func(m gateway.Movement) error {
		lines = append(lines, m)
		return nil
	})
	return lines, st, err
}

// checkChain checks a statement's lines against its balances: each line's
// balance is the previous one plus its amount, starting from opening and
// ending at closing, never below zero, and times never go back.
func checkChain(opening, closing pix.Amount, lines []gateway.Movement) error {
	bal := opening
	var sum pix.Amount
	for i, l := range lines {
		bal += l.Amount
		sum += l.Amount
		if l.Balance != bal {
			return fmt.Errorf("line %d %+v: balance %d, want previous + amount = %d", i, l, l.Balance, bal)
		}
		if l.Balance < 0 {
			return fmt.Errorf("line %d %+v: running balance below zero", i, l)
		}
		if i > 0 && l.At.Before(lines[i-1].At) {
			return fmt.Errorf("line %d %+v: earlier than the line before (%v)", i, l, lines[i-1].At)
		}
	}
	if opening+sum != closing {
		return fmt.Errorf("opening %d + Σ amounts %d = %d, closing %d (%d lines)", opening, sum, opening+sum, closing, len(lines))
	}
	return nil
}

// requireJSONLines checks that the JSON statement of [from, to) holds lines.
func requireJSONLines(t *testing.T, ctx context.Context, s *gateway.Service, c pix.Client, from, to time.Time, lines []gateway.Movement) {
	t.Helper()
	st, err := s.Statement(ctx, c, gateway.StatementQuery{From: from.Format(time.RFC3339Nano), To: to.Format(time.RFC3339Nano), Format: "json"})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, st.Write(ctx, &buf))
	var body statementJSON
	require.NoError(t, json.Unmarshal(buf.Bytes(), &body))
	require.Equal(t, int64(st.Opening), body.Data.Opening)
	require.Equal(t, int64(st.Closing), body.Data.Closing)
	require.Len(t, body.Data.Movements, len(lines))
	for i, m := range body.Data.Movements {
		l := lines[i]
		require.Equal(t, []any{l.TransactionID, l.Type, int64(l.Amount), int64(l.Balance)}, []any{m.TransactionID, m.Type, m.Amount, m.Balance}, "line %d", i)
	}
}
