package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// PSPState is the PSP's state as the metrics show it, read at every
// scrape from what the provider has seen.
type PSPState struct {
	// Up: the last call to the PSP got an answer (false before any call).
	Up bool
	// WebhookRegistered: the last reading of the PSP's webhook found this
	// deployment's URL (false before any reading).
	WebhookRegistered bool
	// CertNotAfter is when the PSP client certificate expires; zero
	// leaves its series out.
	CertNotAfter time.Time
}

// SetPSP installs the callback behind pixgate_psp_up,
// pixgate_psp_webhook_registered and
// pixgate_psp_certificate_expiry_timestamp_seconds. Call it once, and only
// with a provider that calls a PSP: with the simulated network there is
// no PSP to report on, and the series are absent.
func (m *Metrics) SetPSP(f func() PSPState) error {
	if m == nil {
		return nil
	}
	if err := m.reg.Register(newPSPCollector(f)); err != nil {
		return fmt.Errorf("metrics: PSP: %w", err)
	}
	return nil
}

// pspCollector exports the PSPState of its callback, which must be cheap
// (it reads memory, never the network).
type pspCollector struct {
	state                  func() PSPState
	up, registered, expiry *prometheus.Desc
}

func newPSPCollector(f func() PSPState) *pspCollector {
	return &pspCollector{
		state: f,
		up: prometheus.NewDesc("pixgate_psp_up",
			"1 while the last call to the PSP got an answer, 0 after a failed one (timeout, TLS, connection, 5xx, authentication refused) and before the first.", nil, nil),
		registered: prometheus.NewDesc("pixgate_psp_webhook_registered",
			"1 when the last reading of the PSP's webhook (GET /webhook/{chave}, at start and every 5 minutes) found this deployment's URL, else 0.", nil, nil),
		expiry: prometheus.NewDesc("pixgate_psp_certificate_expiry_timestamp_seconds",
			"When the PSP client certificate (PIXGATE_PSP_CERT_FILE) expires, in Unix seconds.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *pspCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.up
	ch <- c.registered
	ch <- c.expiry
}

// Collect implements prometheus.Collector.
func (c *pspCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.state()
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, b2f(s.Up))
	ch <- prometheus.MustNewConstMetric(c.registered, prometheus.GaugeValue, b2f(s.WebhookRegistered))
	if !s.CertNotAfter.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.expiry, prometheus.GaugeValue, float64(s.CertNotAfter.Unix()))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
