package cli

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/internal/config"
	"github.com/pixgate/pixgate/internal/metrics"
	"github.com/pixgate/pixgate/internal/provider"
)

// Watching a PSP.
const (
	// webhookCheckEvery spaces the readings of the PSP's webhook
	// registration after the one at start.
	webhookCheckEvery = 5 * time.Minute
	// certWarnWithin is how close to its expiry the PSP client certificate
	// makes serve warn, at start and then every certCheckEvery.
	certWarnWithin = 30 * 24 * time.Hour
	certCheckEvery = 24 * time.Hour
)

// pspProvider reports whether the settings name a real PSP (apipix, efi).
func pspProvider(s config.Settings) bool {
	return s.Provider == config.ProviderAPIPix || s.Provider == config.ProviderEfi
}

// warnSandboxPSP warns, at every start, that the sandbox environment with
// a real PSP is meant for that PSP's own test environment only: the
// sandbox's rules, harmless with simulated money, apply to whatever that
// PSP moves.
func (a *app) warnSandboxPSP() {
	if !a.settings.Sandbox() || !pspProvider(a.settings) {
		return
	}
	a.log.Warn("PIXGATE_ENV=sandbox with PIXGATE_PROVIDER="+a.settings.Provider+
		": only for a PSP's test environment (such as Efí's homologação), never for real money. Sandbox rules apply:"+
		" client webhook URLs may be http and may resolve to private addresses (unless PIXGATE_WEBHOOK_ALLOW_PRIVATE=false),"+
		" the PSP webhook URL may be http, an empty database gets a sandbox client and panel operator whose credentials are printed,"+
		" and panel cookies are not Secure. Set PIXGATE_ENV=production for real money",
		"provider", a.settings.Provider)
}

// pspState is what the metrics show of psp, when it calls a PSP.
func (a *app) pspState(psp provider.Provider) (func() metrics.PSPState, bool) {
	r, ok := psp.(provider.HealthReporter)
	if !ok {
		return nil, false
	}
	notAfter := a.settings.CertNotAfter
	return func() metrics.PSPState {
		h := r.Health()
		return metrics.PSPState{Up: h.Up, WebhookRegistered: h.Webhook == provider.WebhookOurs, CertNotAfter: notAfter}
	}, true
}

// checkCertificate logs a warning when the PSP client certificate expires
// within certWarnWithin of now, and an error once it has expired (serve
// refuses to start with an expired one; this catches one that expires
// while serving).
func (a *app) checkCertificate(now time.Time) {
	notAfter := a.settings.CertNotAfter
	if notAfter.IsZero() {
		return
	}
	left := notAfter.Sub(now)
	switch {
	case left <= 0:
		a.log.Error("the PSP client certificate has expired: every call to the PSP fails; renew it and restart",
			"file", a.settings.PSPCertFile, "not_after", notAfter.UTC().Format(time.RFC3339))
	case left <= certWarnWithin:
		a.log.Warn("the PSP client certificate expires soon: renew it with the PSP before then",
			"file", a.settings.PSPCertFile, "not_after", notAfter.UTC().Format(time.RFC3339),
			"days_left", int(left.Hours()/24))
	}
}

// watchCertificate runs checkCertificate now and then every interval
// until ctx ends.
func (a *app) watchCertificate(ctx context.Context, interval time.Duration) {
	if a.settings.CertNotAfter.IsZero() {
		return
	}
	a.checkCertificate(time.Now())
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			a.checkCertificate(now)
		}
	}
}

// checkWebhook reads which webhook URL the PSP holds for the merchant's
// key, once, and logs an error when it is not this deployment's (another
// deployment on the same PSP account registered its own, or the
// registration was removed). It never registers again: two deployments
// doing so would take the webhook from each other forever, and reading
// the PSP's list of received Pix keeps crediting payments meanwhile.
// prev is the state of the last reading; the new one is returned.
func (a *app) checkWebhook(ctx context.Context, w provider.WebhookChecker, prev provider.WebhookState) provider.WebhookState {
	state, err := w.CheckWebhook(ctx)
	if err != nil {
		if ctx.Err() == nil {
			// The provider's errors are scrubbed of secrets (provider/apipix).
			a.log.Warn("could not read the PSP's webhook registration; trying again later",
				"retry_in", webhookCheckEvery.String(), "error", err.Error())
		}
		return prev
	}
	switch state {
	case provider.WebhookOurs:
		if prev != provider.WebhookOurs {
			a.log.Info("the PSP's webhook registration is this deployment's")
		}
	case provider.WebhookOther:
		host := ""
		if r, ok := w.(provider.HealthReporter); ok {
			host = r.Health().WebhookHost
		}
		a.log.Error("the PSP holds another webhook URL for PIXGATE_PSP_PIX_KEY: another deployment on the same PSP account "+
			"took it over, and the PSP's notifications go there. Payments are still found by reading the PSP's list of received Pix. "+
			"Give each deployment its own PSP account (or key), then restart this one to register it again",
			"registered_host", host)
	case provider.WebhookNone:
		a.log.Error("the PSP holds no webhook URL for PIXGATE_PSP_PIX_KEY (removed at the PSP): its notifications reach no one. " +
			"Payments are still found by reading the PSP's list of received Pix. Restart pixgate to register it again")
	}
	return state
}

// watchWebhook runs checkWebhook now and then every interval until ctx
// ends.
func (a *app) watchWebhook(ctx context.Context, w provider.WebhookChecker, interval time.Duration) {
	state := a.checkWebhook(ctx, w, provider.WebhookUnknown)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			state = a.checkWebhook(ctx, w, state)
		}
	}
}
