package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"
)

// BatchDrainReport is what a batch drain measured, per batch of up to
// 1,000 payouts: the request until its 202, and from the 202 until the
// PSP had every item's PUT and until every item was final.
type BatchDrainReport struct {
	Items   int
	Latency time.Duration
	// Accept, AtPSP and Final hold one figure per batch, in order.
	Accept, AtPSP, Final []time.Duration
}

// String is the report on one line per figure, medians first.
func (r BatchDrainReport) String() string {
	return fmt.Sprintf("latency %s: %d items per batch; 202 in %s; all at the PSP %s after it; all final %s after it (medians of %d batches)",
		r.Latency, r.Items, median(r.Accept), median(r.AtPSP), median(r.Final), len(r.Final))
}

// MarshalJSON writes durations as milliseconds.
func (r BatchDrainReport) MarshalJSON() ([]byte, error) {
	ms := func(ds []time.Duration) []*float64 {
		out := make([]*float64, len(ds))
		for i, d := range ds {
			out[i] = msJSON(d)
		}
		return out
	}
	b, err := json.Marshal(map[string]any{"items": r.Items, "latency_ms": msJSON(r.Latency),
		"accept_ms": ms(r.Accept), "at_psp_ms": ms(r.AtPSP), "final_ms": ms(r.Final)})
	if err != nil {
		return nil, fmt.Errorf("batch drain report: %w", err)
	}
	return b, nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(time.Millisecond)
}

// DrainBatches funds a merchant through the PSP, then sends batches
// batches of cfg.Payouts payouts of R$ 1.00, one after the other, each once
// the previous one is final, and measures each as BatchDrainReport says.
func DrainBatches(ctx context.Context, cfg DrainConfig, batches int) (BatchDrainReport, error) {
	cl, err := StartCluster(ctx, ClusterConfig{Pixgate: cfg.Pixgate, DB: cfg.DB, PostgresURL: cfg.PostgresURL, Nodes: 1,
		Dir: cfg.Dir, Log: cfg.Log, Seed: 1})
	if err != nil {
		return BatchDrainReport{}, fmt.Errorf("batch drain: start the system: %w", err)
	}
	defer func() { _ = cl.Close() }()
	api := NewAPI(cl.Addrs(), cl.Up, cl.Clients())
	if err := fund(ctx, cl, api, int64(cfg.Payouts*batches)); err != nil {
		return BatchDrainReport{}, fmt.Errorf("batch drain: %w", err)
	}
	cl.PSP().SetLatency(cfg.Latency, cfg.Latency/5)
	r := BatchDrainReport{Items: cfg.Payouts, Latency: cfg.Latency}
	for n := range batches {
		accept, atPSP, final, err := drainBatch(ctx, cl, api, cfg.Payouts, n)
		if err != nil {
			return BatchDrainReport{}, fmt.Errorf("batch drain: batch %d: %w", n, err)
		}
		r.Accept, r.AtPSP, r.Final = append(r.Accept, accept), append(r.AtPSP, atPSP), append(r.Final, final)
	}
	return r, nil
}

// drainBatch sends one batch and waits until the PSP has every item's PUT
// and the batch reads every item final.
func drainBatch(ctx context.Context, cl *Cluster, api *API, size, n int) (accept, atPSP, final time.Duration, err error) {
	items := make([]any, size)
	for i := range items {
		key := fmt.Sprintf("batch%d-%d", n, i)
		items[i] = map[string]any{"amount": reais(100), "description": key, "external_id": key,
			"creditParty": map[string]any{"name": "Fornecedor", "keyType": "EMAIL", "key": key + "@example.com"}}
	}
	body, _ := json.Marshal(map[string]any{"external_id": fmt.Sprint("drain-batch-", n), "callbackUrl": cl.Receiver().URL(0), "items": items})
	start := time.Now()
	status, b, err := api.CallRetrying(ctx, 8, 0, http.MethodPost, "/api/v1/gateway/pix-payments/batch", nil, body)
	if err != nil {
		return 0, 0, 0, err
	}
	acceptedAt := time.Now()
	var v struct {
		Data struct {
			BatchID  string `json:"batch_id"`
			Accepted int    `json:"accepted"`
			Items    []struct {
				TransactionID string `json:"transaction_id"`
			} `json:"items"`
		} `json:"data"`
	}
	if status != http.StatusAccepted || json.Unmarshal(b, &v) != nil || v.Data.Accepted != size {
		return 0, 0, 0, fmt.Errorf("answered %d: %.300s", status, b)
	}
	var lastPut time.Time
	for left := v.Data.Items; len(left) > 0; {
		puts := sendTimes(cl.PSP())
		rest := left[:0]
		for _, it := range left {
			if at, ok := puts[hexID(it.TransactionID)]; ok {
				lastPut = later(lastPut, at)
			} else {
				rest = append(rest, it)
			}
		}
		if left = rest; len(left) > 0 {
			if err := pause(ctx, 20*time.Millisecond); err != nil {
				return 0, 0, 0, err
			}
		}
	}
	for {
		done, err := batchFinal(ctx, api, v.Data.BatchID)
		if err != nil {
			return 0, 0, 0, err
		}
		if done {
			return acceptedAt.Sub(start), lastPut.Sub(acceptedAt), time.Since(acceptedAt), nil
		}
		if err := pause(ctx, 20*time.Millisecond); err != nil {
			return 0, 0, 0, err
		}
	}
}

// batchFinal reports whether batch id reads no item PENDING or SCHEDULED.
func batchFinal(ctx context.Context, api *API, id string) (bool, error) {
	status, _, b, err := api.Call(ctx, 0, http.MethodGet, "/api/v1/gateway/pix-payments/batch/"+id, nil, nil)
	if err != nil {
		return false, err
	}
	var v struct {
		Data struct {
			Counts map[string]int `json:"counts"`
		} `json:"data"`
	}
	if status != http.StatusOK || json.Unmarshal(b, &v) != nil {
		return false, fmt.Errorf("GET batch answered %d: %.300s", status, b)
	}
	return v.Data.Counts["PENDING"] == 0 && v.Data.Counts["SCHEDULED"] == 0, nil
}

func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return fmt.Errorf("waiting: %w", ctx.Err())
	case <-time.After(d):
		return nil
	}
}
