package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/testkit"
)

// proc is the real pixgate binary serving on a free port.
type proc struct {
	cmd            *exec.Cmd
	addr           string
	stdout, stderr *testkit.Buffer
	exited         chan struct{}
}

func startProc(t *testing.T, dbURL string, flags ...string) *proc {
	t.Helper()
	bin := buildPixgate(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	p := &proc{addr: addr, stdout: &testkit.Buffer{}, stderr: &testkit.Buffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr, "--database-url", dbURL}, flags...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIXGATE_") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { p.kill() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("pixgate exited before serving; stderr:\n%s", p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "no /healthz; stderr:\n%s", p.stderr.String())
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

type acked struct {
	kind string // charge, paid, payout, refund
	id   string
}

// TestKillUnderLoad kills a real server with SIGKILL at random moments
// under concurrent load, restarts it each time, and then audits: every
// acknowledged operation is there with a consistent status, the ledger sums
// to zero with no negative balance, pending payouts and refunds finish, and
// every event reaches the receiver at least once.
func TestKillUnderLoad(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		var recvMu sync.Mutex
		received := map[string]int{}
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			recvMu.Lock()
			received[r.Header.Get("webhook-id")]++
			recvMu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(recv.Close)
		flags := []string{"--sandbox-payout-delay", "200ms", "--rate-limit", "1000000",
			"--webhook-retry-schedule", "100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms"}

		p := startProc(t, dbURL, flags...)
		c := testkit.DecodeOne(t, p.stdout.String(), testkit.ServeKeys...)
		var mu sync.Mutex
		var acks []acked
		ack := func(kind, id string) { mu.Lock(); acks = append(acks, acked{kind, id}); mu.Unlock() }
		paidIDs := func() []string {
			mu.Lock()
			defer mu.Unlock()
			var out []string
			for _, a := range acks {
				if a.kind == "paid" {
					out = append(out, a.id)
				}
			}
			return out
		}
		client := &http.Client{Timeout: 5 * time.Second}
		call := func(addr, method, path string, body any) (int, map[string]any, error) {
			var rd io.Reader
			if body != nil {
				raw, _ := json.Marshal(body)
				rd = strings.NewReader(string(raw))
			}
			req, _ := http.NewRequest(method, "http://"+addr+path, rd)
			req.Header.Set("stpi", c.ClientID)
			req.Header.Set("stps", c.ClientSecret)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return 0, nil, err
			}
			defer resp.Body.Close()
			var out map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				return resp.StatusCode, nil, err // killed mid-answer: not acknowledged
			}
			return resp.StatusCode, out, nil
		}
		seq := 0
		var seqMu sync.Mutex
		next := func() int { seqMu.Lock(); defer seqMu.Unlock(); seq++; return seq }

		for round := 0; round < 3; round++ {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := 0; w < 6; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(round), uint64(w)))
					for {
						select {
						case <-stop:
							return
						default:
						}
						switch op := r.IntN(6); {
						case op <= 2:
							body := charge(fmt.Sprintf("k-%d", next()), float64(10+r.IntN(90)))
							body["postbackUrl"] = recv.URL + "/cashin"
							st, out, err := call(p.addr, "POST", "/api/v1/gateway/request-qrcode", body)
							if err != nil || st != http.StatusCreated {
								continue
							}
							id := out["payment_id"].(string)
							ack("charge", id)
							if st, _, err := call(p.addr, "POST", "/api/v1/sandbox/charges/"+id+"/pay", nil); err == nil && st == http.StatusOK {
								ack("paid", id)
							}
						case op <= 4:
							keys := []string{"a@example.com", "b@fail.sandbox", "c@reverse.sandbox"}
							st, out, err := call(p.addr, "POST", "/api/v1/gateway/pix-payment", map[string]any{
								"amount": 1 + r.IntN(5), "description": "d", "callbackUrl": recv.URL + "/payout",
								"creditParty": map[string]any{"name": "n", "keyType": "EMAIL", "key": keys[r.IntN(3)]}})
							if err == nil && st == http.StatusOK {
								ack("payout", out["transaction_id"].(string))
							}
						default:
							ids := paidIDs()
							if len(ids) == 0 {
								continue
							}
							st, out, err := call(p.addr, "POST", "/api/v1/gateway/refund", map[string]any{
								"payment_id": ids[r.IntN(len(ids))], "amount": 1})
							if err == nil && st == http.StatusOK {
								ack("refund", out["refund_id"].(string))
							}
						}
					}
				}()
			}
			time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
			p.kill() // at a random moment, with requests in flight
			close(stop)
			wg.Wait()
			p = startProc(t, dbURL, flags...)
		}

		db := testkit.OpenURL(t, dbURL)
		ctx := context.Background()
		// Pending work finishes after the last restart.
		// The condition runs in a goroutine of its own: it fails through ct,
		// never through t.
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			counts, err := db.StatusCounts(ctx)
			require.NoError(ct, err)
			pendingPayouts := counts[string(pix.TypeCashout)]["PENDING"]
			b, err := db.Balances(ctx, c.ClientID)
			require.NoError(ct, err)
			// Returned payouts are PAID with their return still scheduled.
			scheduled, err := db.DueSettlements(ctx, time.Now().Add(time.Hour), 1)
			require.NoError(ct, err)
			refunds, err := db.DueRefundRows(ctx, time.Now().Add(time.Hour), 1)
			require.NoError(ct, err)
			// The outbox last: work that finishes between these reads writes
			// its event with it, so an empty outbox read after they all show
			// nothing left means every event was delivered.
			lag, _, err := db.OutboxLag(ctx, time.Now())
			require.NoError(ct, err)
			assert.True(ct, pendingPayouts == 0 && lag == 0 && b[ledger.Pending] == 0 && len(scheduled) == 0 && len(refunds) == 0)
		}, 30*time.Second, 100*time.Millisecond, "payouts, refunds and deliveries finish after restart")

		require.NoError(t, db.CheckLedger(ctx))
		b, err := db.Balances(ctx, c.ClientID)
		require.NoError(t, err)
		require.GreaterOrEqual(t, int64(b[ledger.Available]), int64(0))

		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, acks)
		kinds := map[string]int{}
		for _, a := range acks {
			kinds[a.kind]++
			switch a.kind {
			case "charge":
				tr, err := db.Transaction(ctx, c.ClientID, a.id)
				require.NoError(t, err, "acknowledged charge %s is stored", a.id)
				require.Equal(t, pix.TypeCashin, tr.Type)
			case "paid":
				tr, err := db.Transaction(ctx, c.ClientID, a.id)
				require.NoError(t, err)
				require.Contains(t, []pix.TxStatus{"PAID", "REFUNDED"}, tr.Status)
				require.NotZero(t, tr.ConfirmedAt)
			case "payout":
				tr, err := db.Transaction(ctx, c.ClientID, a.id)
				require.NoError(t, err)
				require.Contains(t, []pix.TxStatus{"PAID", "CANCELLED", "REVERSED"}, tr.Status)
			case "refund":
				rf, err := db.Refund(ctx, c.ClientID, a.id)
				require.NoError(t, err)
				require.Contains(t, []pix.RefundStatus{pix.RefundCompleted, pix.RefundFailed}, rf.Status)
			}
		}
		t.Logf("acknowledged: %v", kinds)
		// Every event was delivered at least once.
		recvMu.Lock()
		defer recvMu.Unlock()
		for _, a := range acks {
			if a.kind == "refund" {
				continue
			}
			events, err := db.Events(ctx, a.id)
			require.NoError(t, err)
			for _, e := range events {
				require.Equal(t, "delivered", e.Status)
				require.GreaterOrEqual(t, received[e.ID], 1, "event %s reached the receiver", e.ID)
			}
		}
	})
}
