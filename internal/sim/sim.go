// Package sim is pixgate's whole-system simulation, after TigerBeetle's
// VOPR and FoundationDB's simulation testing: real `pixgate serve`
// processes (production, provider efi) against the PSP simulator, on
// SQLite or PostgreSQL, driven by a random workload while faults are
// injected (PSP errors, hangs, lost webhooks, latency, SIGKILLs, a failing
// merchant receiver). One seed decides the workload, the fault schedule
// and the kill points; after the run quiesces, an auditor checks what
// must be true of the money and reports each rule as numbers.
//
// The workload (workload.go), the faults (faults.go) and the auditor
// (audit*.go) each live in their own files, so that a new rule is one new
// check. It is a test tool: cmd/pixgate-sim runs it, not the product.
package sim

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Credentials are one merchant client's of the system under test.
type Credentials struct {
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	WebhookSecret string `json:"webhook_secret"`
}

// Check is one rule the auditor verified: how many things it looked at,
// and a sentence for each that breaks it.
type Check struct {
	Name       string
	Checked    int
	Violations []string
}

// KeyRecord is one idempotent creation as the workload made it, kept so
// that the auditor can replay it.
type KeyRecord struct {
	Kind   string // "charge", "payout" or "refund"
	Client int    // index into the clients
	Method string
	Path   string
	Key    string // the Idempotency-Key header ("" when only external_id keys it)
	ExtID  string // the external_id of the body, if any
	Body   []byte
	// Status and Response are the first definitive answer (2xx or 4xx)
	// the workload got; 0 when every attempt failed (the outcome is
	// unknown to the workload, never to pixgate).
	Status   int
	Response []byte
	// ID is the payment_id, transaction_id or refund_id answered.
	ID string
}

// Report is what a run did and what the auditor found.
type Report struct {
	Seed    uint64
	DB      string
	Nodes   int
	Ops     map[string]int // operations issued, by kind
	Faults  map[string]int // faults injected, by kind
	Kills   int
	Elapsed time.Duration
	// Quiesced is false when the system did not settle within the
	// quiescence budget (the checks then say what was left).
	Quiesced bool
	Checks   []Check
}

// Failed reports whether a check found a violation or the run did not
// quiesce.
func (r Report) Failed() bool {
	if !r.Quiesced {
		return true
	}
	for _, c := range r.Checks {
		if len(c.Violations) > 0 {
			return true
		}
	}
	return false
}

// String is the report as people read it: the run, then one line per
// check with its numbers, and the first violations of each.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %s, %d node(s), %s\n", r.Seed, r.DB, r.Nodes, r.Elapsed.Round(time.Second))
	fmt.Fprintf(&b, "operations: %s (%d)\n", counts(r.Ops), total(r.Ops))
	fmt.Fprintf(&b, "faults: %s (%d), kills: %d\n", counts(r.Faults), total(r.Faults), r.Kills)
	if !r.Quiesced {
		b.WriteString("NOT QUIESCED: the system did not settle within the budget\n")
	}
	for _, c := range r.Checks {
		mark := "ok  "
		if len(c.Violations) > 0 {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "%s %-48s checked %6d, violations %d\n", mark, c.Name, c.Checked, len(c.Violations))
		for i, v := range c.Violations {
			if i == 10 {
				fmt.Fprintf(&b, "       … and %d more\n", len(c.Violations)-i)
				break
			}
			fmt.Fprintf(&b, "       - %s\n", v)
		}
	}
	return b.String()
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
