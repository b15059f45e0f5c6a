package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pixgate/pixgate/internal/pspsim"
)

// DrainConfig is one measurement of how fast pixgate sends a backlog of
// payouts to a PSP that takes Latency per call: no faults, no kills.
type DrainConfig struct {
	DB          string
	PostgresURL string
	Pixgate     string
	Dir         string
	// Payouts is the backlog's size; Concurrency how many payout requests
	// the merchant keeps in flight while creating it.
	Payouts, Concurrency int
	Latency              time.Duration
	Log                  *slog.Logger
}

// DrainReport is what a drain measured: when payouts were accepted and
// when the PSP received their PUTs.
type DrainReport struct {
	Payouts  int
	Latency  time.Duration
	Accepted time.Duration // first to last acceptance
	// Sent is from the first PUT to the last one the PSP received; SendRate
	// is Payouts over it: the rate at which the backlog drained.
	Sent     time.Duration
	SendRate float64
	// ToPSP are percentiles of each payout's acceptance → PUT at the PSP.
	ToPSP map[string]time.Duration
}

// String is the report on one line.
func (r DrainReport) String() string {
	return fmt.Sprintf("latency %s: %d payouts accepted in %s (%.0f/s); sent in %s (%.0f/s); acceptance → PUT p50 %s p99 %s max %s",
		r.Latency, r.Payouts, r.Accepted.Round(time.Millisecond), float64(r.Payouts)/max(r.Accepted.Seconds(), 1e-3),
		r.Sent.Round(time.Millisecond), r.SendRate, r.ToPSP["p50"].Round(time.Millisecond), r.ToPSP["p99"].Round(time.Millisecond),
		r.ToPSP["max"].Round(time.Millisecond))
}

// MarshalJSON writes durations as milliseconds.
func (r DrainReport) MarshalJSON() ([]byte, error) {
	toPSP := map[string]*float64{}
	for k, d := range r.ToPSP {
		toPSP[k] = msJSON(d)
	}
	b, err := json.Marshal(map[string]any{"payouts": r.Payouts, "latency_ms": msJSON(r.Latency),
		"accepted_ms": msJSON(r.Accepted), "accept_rate": float64(r.Payouts) / max(r.Accepted.Seconds(), 1e-3),
		"sent_ms": msJSON(r.Sent), "send_rate": r.SendRate, "acceptance_to_put_ms": toPSP})
	if err != nil {
		return nil, fmt.Errorf("drain report: %w", err)
	}
	return b, nil
}

// Drain funds a merchant through the PSP, then creates cfg.Payouts payouts
// of R$ 1.00 as fast as cfg.Concurrency requests allow, and measures how
// they reach the PSP.
func Drain(ctx context.Context, cfg DrainConfig) (DrainReport, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cl, err := StartCluster(ctx, ClusterConfig{Pixgate: cfg.Pixgate, DB: cfg.DB, PostgresURL: cfg.PostgresURL, Nodes: 1,
		Dir: cfg.Dir, Log: cfg.Log, Seed: 1})
	if err != nil {
		return DrainReport{}, fmt.Errorf("drain: start the system: %w", err)
	}
	defer func() { _ = cl.Close() }()
	api := NewAPI(cl.Addrs(), cl.Up, cl.Clients())
	psp := cl.PSP()

	if err := fund(ctx, cl, api, int64(cfg.Payouts)); err != nil {
		return DrainReport{}, fmt.Errorf("drain: %w", err)
	}
	psp.SetLatency(cfg.Latency, cfg.Latency/5)

	// The backlog.
	accepted := make(map[string]time.Time, cfg.Payouts)
	var mu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range max(cfg.Concurrency, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1)
				if n > int64(cfg.Payouts) {
					return
				}
				key := fmt.Sprintf("drain-%d", n)
				body, _ := json.Marshal(map[string]any{"amount": reais(100), "description": key, "callbackUrl": cl.Receiver().URL(0),
					"creditParty": map[string]any{"name": "Fornecedor", "keyType": "EMAIL", "key": key + "@example.com"}})
				status, b, err := api.CallRetrying(ctx, 8, 0, http.MethodPost, "/api/v1/gateway/pix-payment", map[string]string{"Idempotency-Key": key}, body)
				if err != nil || status != http.StatusOK {
					failed.Add(1)
					continue
				}
				at := time.Now()
				mu.Lock()
				accepted[answerID(b)] = at
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		return DrainReport{}, fmt.Errorf("drain: %d payouts were not accepted", n)
	}

	// Until the PSP has every PUT.
	var puts map[string]time.Time
	for {
		puts = sendTimes(psp)
		if len(puts) >= cfg.Payouts || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	r := DrainReport{Payouts: cfg.Payouts, Latency: cfg.Latency, ToPSP: map[string]time.Duration{}}
	var firstAcc, lastAcc, firstPut, lastPut time.Time
	var waits []time.Duration
	for id, at := range accepted {
		put, ok := puts[hexID(id)]
		if !ok {
			continue
		}
		waits = append(waits, put.Sub(at))
		if firstAcc.IsZero() || at.Before(firstAcc) {
			firstAcc = at
		}
		lastAcc = later(lastAcc, at)
		if firstPut.IsZero() || put.Before(firstPut) {
			firstPut = put
		}
		lastPut = later(lastPut, put)
	}
	r.Accepted, r.Sent = lastAcc.Sub(firstAcc), lastPut.Sub(firstPut)
	r.SendRate = float64(len(waits)) / max(r.Sent.Seconds(), 1e-3)
	sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
	if len(waits) > 0 {
		r.ToPSP["p50"] = waits[len(waits)/2]
		r.ToPSP["p99"] = waits[len(waits)*99/100]
		r.ToPSP["max"] = waits[len(waits)-1]
	}
	return r, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// fund credits the merchant of client 0 with enough for payouts of
// R$ 1.00 (R$ 1.00 + R$ 0.50 fee each) through charges of R$ 300.00 that
// the PSP's payer pays, and waits until the balance shows it.
func fund(ctx context.Context, cl *Cluster, api *API, payouts int64) error {
	psp := cl.PSP()
	need := payouts * 150
	for funded := int64(0); funded < need; funded += 29700 {
		body, _ := json.Marshal(map[string]any{
			"amount": reais(30000), "external_id": fmt.Sprintf("fund-%d", funded), "payerQuestion": "Fundos", "postbackUrl": cl.Receiver().URL(0),
			"payer": map[string]any{"name": "Maria Souza", "document": "52998224725", "phoneNumber": "11987654321", "email": "maria@example.com",
				"address": map[string]any{"street": "Rua A", "number": "1", "neighborhood": "Centro", "city": "Recife", "state": "PE", "zipCode": "50000000"}},
			"products": []any{map[string]any{"name": "Item", "quantity": "1", "price": reais(30000)}},
		})
		status, b, err := api.CallRetrying(ctx, 8, 0, http.MethodPost, "/api/v1/gateway/request-qrcode", nil, body)
		if err != nil {
			return fmt.Errorf("fund: %w", err)
		}
		if status != http.StatusCreated {
			return fmt.Errorf("fund: charge answered %d: %s", status, b)
		}
		var v struct {
			QRCode string `json:"qrcode"`
		}
		_ = json.Unmarshal(b, &v)
		if _, err := psp.Pay(ctx, psp.TxIDOf(v.QRCode)); err != nil {
			return fmt.Errorf("fund: %w", err)
		}
	}
	for {
		_, _, b, err := api.Call(ctx, 0, http.MethodGet, "/api/v1/wallet/balance", nil, nil)
		var v struct {
			Data struct {
				Available int64 `json:"available_cents"`
			} `json:"data"`
		}
		if err == nil && json.Unmarshal(b, &v) == nil && v.Data.Available >= need {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("fund: %w", ctx.Err())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sendTimes is when the PSP received each send's PUT, by its idEnvio (to
// the millisecond, as the PSP reports it).
func sendTimes(psp *pspsim.Server) map[string]time.Time {
	puts := map[string]time.Time{}
	for _, s := range psp.State().Sends {
		if t, err := time.Parse("2006-01-02T15:04:05.000Z07:00", s.Horario.Solicitacao); err == nil {
			puts[s.IDEnvio] = t
		}
	}
	return puts
}
