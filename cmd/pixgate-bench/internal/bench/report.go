package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Report is the result of one run; --json prints it as one document.
type Report struct {
	Target      string  `json:"target"`
	Mode        string  `json:"mode"` // "closed" (fixed workers) or "open" (fixed rate)
	Concurrency int     `json:"concurrency,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	Clients     int     `json:"clients"`
	DurationS   float64 `json:"duration_s"`
	// WarmupS is the load sent before the measured DurationS (Config.Warmup)
	// and Warmup its operations, all kinds together; both absent without.
	WarmupS    float64        `json:"warmup_s,omitempty"`
	Warmup     *OpReport      `json:"warmup,omitempty"`
	Mix        map[string]int `json:"mix"`
	Operations []OpReport     `json:"operations"`
	Total      OpReport       `json:"total"`
	// WebhooksReceived counts deliveries to the bench's own receiver.
	WebhooksReceived int64        `json:"webhooks_received"`
	Check            *CheckReport `json:"check"`
}

// OpReport is one operation's figures. Latencies are of successful
// requests, in milliseconds; errors count failed requests by HTTP status,
// "transport" (no complete answer) or "bad-body" (a 2xx that did not say
// what it should).
type OpReport struct {
	Op     string         `json:"op"`
	Count  int            `json:"count"`
	OK     int            `json:"ok"`
	Errors map[string]int `json:"errors"`
	RPS    float64        `json:"rps"`
	OKRPS  float64        `json:"ok_rps"`
	P50MS  float64        `json:"p50_ms"`
	P95MS  float64        `json:"p95_ms"`
	P99MS  float64        `json:"p99_ms"`
	MaxMS  float64        `json:"max_ms"`
	MeanMS float64        `json:"mean_ms"`
}

// CheckReport is the outcome of the correctness check.
type CheckReport struct {
	OK       bool `json:"ok"`
	Clients  int  `json:"clients"`
	Charges  int  `json:"charges"`
	Payouts  int  `json:"payouts"`
	Unknown  int  `json:"unknown_outcome"`
	Rejected int  `json:"rejected"`
	// RejectedChecked is how many refused operations were confirmed absent
	// (a sample when there are very many).
	RejectedChecked int `json:"rejected_checked"`
	// PendingDrainedS is how long after the load every client's
	// pending_cents reached 0 (all payouts out of PENDING).
	PendingDrainedS float64 `json:"pending_drained_s"`
	// WebhooksDrainedS is how long after the load the server's outbox
	// held no event of the run's clients, every webhook delivered (only
	// with a database URL and the bench's own receiver); WebhooksPending
	// is what was left at the settle timeout.
	WebhooksDrainedS float64  `json:"webhooks_drained_s,omitempty"`
	WebhooksPending  int64    `json:"webhooks_pending,omitempty"`
	DurationS        float64  `json:"duration_s"`
	MismatchCount    int      `json:"mismatch_count"`
	Mismatches       []string `json:"mismatches"`
}

func writeJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

func formatErrors(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

func writeTable(w io.Writer, rep Report) error {
	mode := fmt.Sprintf("%d workers (closed loop)", rep.Concurrency)
	if rep.Mode == "open" {
		mode = fmt.Sprintf("%.0f req/s (open loop)", rep.Rate)
	}
	warm := ""
	if rep.WarmupS > 0 {
		warm = fmt.Sprintf(" after %.1f s of warm-up (its operations in the last row, not in total)", rep.WarmupS)
	}
	fmt.Fprintf(w, "pixgate-bench → %s: %s, %.1f s%s, %d clients\n\n", rep.Target, mode, rep.DurationS, warm, rep.Clients)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tcount\tok\treq/s\tok/s\tp50 ms\tp95 ms\tp99 ms\tmax ms\t errors")
	row := func(o OpReport) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t %s\n",
			o.Op, o.Count, o.OK, o.RPS, o.OKRPS, o.P50MS, o.P95MS, o.P99MS, o.MaxMS, formatErrors(o.Errors))
	}
	for _, o := range rep.Operations {
		row(o)
	}
	row(rep.Total)
	if rep.Warmup != nil {
		row(*rep.Warmup)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.Total.Errors["429"] > 0 {
		fmt.Fprintln(w, "\n429s: the server allows --rate-limit requests per client per 60 s; use more clients (--create-clients) or start the server with a higher --rate-limit.")
	}
	_, err := fmt.Fprintln(w)
	return err
}

func writeCheck(w io.Writer, rep Report) error {
	c := rep.Check
	what := fmt.Sprintf("%d charges, %d payouts, %d of unknown outcome, %d of %d refused operations, %d balances",
		c.Charges, c.Payouts, c.Unknown, c.RejectedChecked, c.Rejected, c.Clients)
	if c.OK {
		_, err := fmt.Fprintf(w, "check: OK — %s agree with the acknowledgements (pending payouts drained %.1f s after the load; check took %.1f s)\n",
			what, c.PendingDrainedS, c.DurationS)
		if err == nil && c.WebhooksDrainedS > 0 {
			_, err = fmt.Fprintf(w, "webhooks: every one of the run's delivered %.1f s after the load (%d still pending)\n", c.WebhooksDrainedS, c.WebhooksPending)
		}
		return err
	}
	fmt.Fprintf(w, "check: FAILED — %d mismatches in %s (%.1f s):\n", c.MismatchCount, what, c.DurationS)
	for _, m := range c.Mismatches {
		fmt.Fprintf(w, "  - %s\n", m)
	}
	if c.MismatchCount > len(c.Mismatches) {
		fmt.Fprintf(w, "  … and %d more\n", c.MismatchCount-len(c.Mismatches))
	}
	return nil
}
