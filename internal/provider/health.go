package provider

import (
	"context"
	"time"
)

// Classes of a failed call to the PSP: what an operator may be shown of
// it, never the error's own text (which may carry addresses).
const (
	FailTimeout           = "timeout"
	FailTLS               = "tls"
	FailConnectionRefused = "connection_refused"
	FailDNS               = "dns"
	FailConnection        = "connection"
	FailHTTP5xx           = "http_5xx"
	FailAuth              = "auth"
	FailBadAnswer         = "bad_answer"
)

// WebhookState is what the PSP holds as the webhook of the merchant's key.
type WebhookState string

// Webhook states. WebhookUnknown: not read yet, or no reading succeeded.
const (
	WebhookUnknown WebhookState = ""
	WebhookOurs    WebhookState = "ours"
	WebhookOther   WebhookState = "other"
	WebhookNone    WebhookState = "none"
)

// Health is what a provider has seen of its PSP, for the metrics and the
// operators' overview.
type Health struct {
	// Up reports that the last call got an answer from the PSP: any but
	// a 5xx or a refused authentication. False before the first call.
	Up bool
	// LastSuccess is when a call last got such an answer (zero: never).
	LastSuccess time.Time
	// LastFailure is when a call last failed and LastFailClass how (one
	// of the Fail* classes); both zero when none failed.
	LastFailure   time.Time
	LastFailClass string
	// Webhook is what the last successful reading of the PSP's webhook
	// registration found, at WebhookCheckedAt; WebhookHost is the host of
	// the URL the PSP holds when it is another's (never its path, which
	// holds that deployment's secret).
	Webhook          WebhookState
	WebhookHost      string
	WebhookCheckedAt time.Time
}

// HealthReporter is implemented by the providers that call a PSP.
type HealthReporter interface {
	Health() Health
}

// WebhookChecker is implemented by the providers that register a webhook
// with their PSP: CheckWebhook reads which URL the PSP holds for the
// merchant's key and says whether it is this process's.
type WebhookChecker interface {
	CheckWebhook(ctx context.Context) (WebhookState, error)
}
