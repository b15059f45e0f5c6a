package pix

// TransferKind is what a transfer of money leaving the PSP account is:
// each kind has its own row, its own finish and its own webhook story.
type TransferKind int

// Transfer kinds.
const (
	// TransferPayout is a merchant's Pix to a key (a cashout transaction).
	TransferPayout TransferKind = iota
	// TransferRefund is a devolução of a charge's payment a merchant asked for.
	TransferRefund
	// TransferReturn is the devolução of a receipt that matched no open
	// charge (an unmatched receipt), to its payer.
	TransferReturn
)

// String names k in logs.
func (k TransferKind) String() string {
	switch k {
	case TransferRefund:
		return "refund"
	case TransferReturn:
		return "unmatched_receipt"
	}
	return "payout"
}

// Send states of a transfer at the PSP (the send_state column). A row
// with none ("") was settled by a version before every provider shared
// the send path, and is never sent.
const (
	// SendToSend: committed, never sent.
	SendToSend = "to_send"
	// SendUnknown: a send may have reached the PSP; its status must be read
	// before any resend. A transfer is moved here, committed, before every
	// send, so a crash during the send leaves it here.
	SendUnknown = "unknown"
	// SendSent: the PSP accepted it; its outcome is polled.
	SendSent = "sent"
	// SendDone: final.
	SendDone = "done"
	// SendScheduled: a payout for a later date (docs/payouts.md): nothing
	// reserved, never due for a send until its day starts and it is
	// moved to SendToSend with its reservation, or it ends (cancelled,
	// or failed for want of balance) straight to SendDone.
	SendScheduled = "scheduled"
)

// sendSteps lists, for each send state, the states one step may leave a
// transfer in. Every state may stay as it is (a step that only moves the
// transfer's next reading, or unschedules a stray row).
var sendSteps = map[string][]string{
	// The claim of a first send moves it to unknown before the send; the
	// PSP's own report of it (a list, a webhook) may finish it at once.
	SendToSend: {SendUnknown, SendSent, SendDone},
	// After a claim: the PSP's 429 (nothing was sent: back to to_send),
	// accepted, final, or still unknown.
	SendUnknown: {SendToSend, SendSent, SendDone},
	// Accepted: read until final; never sent again.
	SendSent: {SendDone},
	// Its day began (reserved, to be sent), or it was cancelled or failed.
	SendScheduled: {SendToSend, SendDone},
}

// SendStepAllowed reports whether one step may move a transfer from send
// state from to to: nothing ever goes back to be sent once the PSP has
// accepted it, and a final transfer stays final.
func SendStepAllowed(from, to string) bool {
	if from == to {
		return true
	}
	for _, s := range sendSteps[from] {
		if s == to {
			return true
		}
	}
	return false
}
