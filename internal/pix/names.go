package pix

// The names pixgate puts on the wire and in its settings, defined once
// here because several layers write or read them: the gateway, the
// configuration, the public Go client and the tools.

// Environments a client and a server belong to (PIXGATE_ENV, a client's
// environment): a client works only on a server of its own environment.
const (
	EnvSandbox    = "sandbox"
	EnvProduction = "production"
)

// Webhook event names (the body's event), as docs/webhooks.md lists them.
const (
	EventCashinPaid      = "pix.cashin.paid"
	EventCashinCancelled = "pix.cashin.cancelled"
	EventCashoutPaid     = "pix.cashout.paid"
	EventCashoutFailed   = "pix.cashout.failed"
	EventCashoutReversed = "pix.cashout.reversed"
	EventRefundCompleted = "pix.refund.completed"
	EventRefundFailed    = "pix.refund.failed"
	// EventDisputeOpened and EventDisputeClosed report a MED dispute of a
	// received Pix (docs/med.md), to the charge's postbackUrl.
	EventDisputeOpened = "pix.dispute.opened"
	EventDisputeClosed = "pix.dispute.closed"
	// EventCashoutCancelled reports a scheduled payout cancelled before
	// its day (docs/payouts.md), to its callbackUrl.
	EventCashoutCancelled = "pix.cashout.cancelled"
	// EventBatchCompleted reports a batch of payouts whose every accepted
	// item is final, to the batch's callbackUrl.
	EventBatchCompleted = "pix.batch.completed"
	// EventSplitReceived reports a receiver's share of a paid split
	// charge, to the receiver's own postbackUrl (docs/marketplace.md).
	EventSplitReceived = "pix.split.received"
)
