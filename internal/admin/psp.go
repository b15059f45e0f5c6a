package admin

import (
	"net/http"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// pspStatus is the PSP's state on the overview, for operators: whether the
// last call got an answer, when one last did, the class of the last
// failure (never its text, which may carry addresses) and whether the
// PSP's webhook is this deployment's. Keys are i18n keys.
type pspStatus struct {
	Up                       bool
	LastSuccess, LastFailure time.Time
	FailKey                  string // "" when no call failed
	WebhookKey               string
	WebhookHost              string
	WebhookCheckedAt         time.Time
	// Alert is set when the PSP's notifications do not reach this
	// deployment: another one took the webhook over, or none is held.
	Alert string
}

// pspFailKeys are the i18n keys of the provider's failure classes.
var pspFailKeys = map[string]string{
	provider.FailTimeout:           "psp.fail.timeout",
	provider.FailTLS:               "psp.fail.tls",
	provider.FailConnectionRefused: "psp.fail.refused",
	provider.FailDNS:               "psp.fail.dns",
	provider.FailConnection:        "psp.fail.connection",
	provider.FailHTTP5xx:           "psp.fail.http5xx",
	provider.FailAuth:              "psp.fail.auth",
	provider.FailBadAnswer:         "psp.fail.badanswer",
}

// pspStatusOf is the overview's PSP section for r: nil for merchant users
// and when the provider calls no PSP.
func (h *Handler) pspStatusOf(r *http.Request) *pspStatus {
	if s, ok := sessionFrom(r); !ok || s.user.Role != pix.RoleOperator {
		return nil
	}
	hl, ok := h.bo.PSPHealth()
	if !ok {
		return nil
	}
	p := &pspStatus{Up: hl.Up, LastSuccess: hl.LastSuccess, LastFailure: hl.LastFailure,
		WebhookHost: hl.WebhookHost, WebhookCheckedAt: hl.WebhookCheckedAt}
	if hl.LastFailClass != "" {
		p.FailKey = pspFailKeys[hl.LastFailClass]
		if p.FailKey == "" {
			p.FailKey = "psp.fail.other"
		}
	}
	switch hl.Webhook {
	case provider.WebhookOurs:
		p.WebhookKey = "psp.webhook.ours"
	case provider.WebhookOther:
		p.WebhookKey, p.Alert = "psp.webhook.other", "psp.alert.other"
	case provider.WebhookNone:
		p.WebhookKey, p.Alert = "psp.webhook.none", "psp.alert.none"
	default:
		p.WebhookKey = "psp.webhook.unknown"
	}
	return p
}
