// Package provider is the seam between pixgate and the PSP that moves money
// on the PIX network. A real PSP is asynchronous: a charge is registered at
// the PSP before its BR Code exists, a payment is reported by webhook or
// found by reading the PSP's list, and a transfer (payout or refund) is
// accepted first and finishes later. The gateway talks to the network only
// through Provider, the same way whichever provider it is:
// provider/sandbox is an in-process PSP, provider/apipix and provider/efi
// reach a real one.
package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// Names of the providers.
const (
	NameSandbox = "sandbox"
	NameAPIPix  = "apipix"
	NameEfi     = "efi"
)

// Errors a Provider returns. Any other error means the outcome is unknown
// (timeout, connection lost, 5xx): the caller must read the state before it
// sends again. A *RateLimitedError (errors.Is ErrRateLimited) is neither:
// the PSP did nothing.
var (
	// ErrNotFound: the PSP does not know the object asked about (404).
	ErrNotFound = errors.New("provider: not known to the PSP")
	// ErrRejected: the PSP refused the request (4xx other than 401/404 after
	// a token refresh): nothing was created.
	ErrRejected = errors.New("provider: refused by the PSP")
	// ErrUnsupported: this provider cannot do that (payouts with apipix).
	ErrUnsupported = errors.New("provider: not available with this provider")
	// ErrRateLimited: the PSP refused the request for its rate (429) and
	// did nothing; RetryAfter says how long it asked to wait. Never
	// ErrRejected: the same request may be sent again after the wait.
	ErrRateLimited = errors.New("provider: rate limited by the PSP")
)

// RateLimitedError is a request the PSP refused for its rate (HTTP 429,
// on any call, the token's included): nothing was done, so the same
// request may be sent again, unchanged, once RetryAfter has passed.
// errors.Is(err, ErrRateLimited) holds for it.
type RateLimitedError struct {
	// RetryAfter is the PSP's Retry-After; zero when it gave none.
	RetryAfter time.Duration
}

// Error says that the PSP limited the rate, and for how long.
func (e *RateLimitedError) Error() string {
	if e.RetryAfter <= 0 {
		return ErrRateLimited.Error()
	}
	return fmt.Sprintf("%s (retry after %s)", ErrRateLimited, e.RetryAfter)
}

// Is makes errors.Is(err, ErrRateLimited) hold.
func (e *RateLimitedError) Is(target error) bool { return target == ErrRateLimited }

// RetryAfter returns how long the PSP asked to wait when err is a rate
// limit (zero when it did not say), and whether it is one.
func RetryAfter(err error) (time.Duration, bool) {
	if rl, ok := errors.AsType[*RateLimitedError](err); ok {
		return rl.RetryAfter, true
	}
	return 0, errors.Is(err, ErrRateLimited)
}

// DefaultCallTimeout bounds one call to a PSP, unless its provider says
// otherwise (Capabilities.CallTimeout).
const DefaultCallTimeout = 15 * time.Second

// Capabilities say what a provider can do and how its charges look.
type Capabilities struct {
	// Payouts is whether Send accepts payouts (refunds are always accepted).
	Payouts bool
	// TxIDLength is the length of the txid of each charge (25 for a static
	// BR Code; 26–35 for a cob).
	TxIDLength int
	// LocalCharges: CreateCharge only writes a static BR Code in this
	// process and registers nothing at a PSP, so a charge that is never
	// stored leaves nothing behind to withdraw, and creating one twice
	// costs nothing (no cob intent is recorded, and a replay is found by
	// the insert rather than by a read before it).
	LocalCharges bool
	// StatelessSends: Send changes nothing anywhere — a transfer's status
	// is a function of the transfer and the clock — so a send needs no
	// claim committed before it and may be made again: the gateway sends a
	// payout as it accepts it and stores it already sent, one write
	// instead of three.
	StatelessSends bool
	// CallTimeout bounds one step's calls to the provider (zero: the
	// gateway's default, 15 s). A transfer being sent is held by its node
	// for twice as long, so the shorter it is, the sooner a node that died
	// mid-step has its transfers taken over.
	CallTimeout time.Duration
}

// Charge is a charge to register at the PSP.
type Charge struct {
	TxID          string
	Amount        pix.Amount
	TTL           time.Duration
	PayerName     string
	PayerDocument string // CPF (11 digits) or CNPJ (14 digits)
	Question      string // solicitacaoPagador
}

// Payment is an inbound PIX payment the PSP reports: a payer paid the
// charge whose txid is TxID.
type Payment struct {
	TxID       string
	Amount     pix.Amount
	EndToEndID string
	PaidAt     time.Time
	// PayerName and PayerDocument are who paid, when the PSP reports it
	// (its pagador: nome, and cpf or cnpj); "" when it does not. The
	// document is a personal datum: it is masked before it is kept and is
	// never logged.
	PayerName     string
	PayerDocument string
	// Refunds are the devoluções of this payment the PSP reports with it.
	Refunds []TransferState
}

// Status is where an outgoing transfer stands at the PSP.
type Status string

// Statuses of an outgoing transfer.
const (
	// Processing: accepted, not final yet (EM_PROCESSAMENTO).
	Processing Status = "processing"
	// Completed: the money reached the beneficiary (REALIZADO, DEVOLVIDO).
	Completed Status = "completed"
	// Failed: the transfer did not happen (NAO_REALIZADO); funds go back.
	Failed Status = "failed"
	// Returned: completed, then the beneficiary's bank returned the amount.
	Returned Status = "returned"
)

// Transfer is an outgoing PIX transfer: a payout or a refund.
type Transfer struct {
	// ID is pixgate's id of the payout or refund (a UUID); providers send
	// it as 32 hex characters (idEnvio, the devolução id).
	ID      string
	Amount  pix.Amount
	KeyType pix.KeyType // payouts
	Key     string      // payouts: the beneficiary's key
	// Description: the payout's description or the refund's reason.
	Description string
	// Refund marks a refund (devolução) of the payment PaymentE2E.
	Refund     bool
	PaymentE2E string
	// AcceptedAt is when pixgate accepted the transfer from its client.
	AcceptedAt time.Time
}

// TransferState is what the PSP says about a transfer.
type TransferState struct {
	// ID is pixgate's id of the transfer, as the UUID it was sent from when
	// the provider can tell (Status and Send fill it; a payment's Refunds
	// carry the PSP's id, 32 hex characters).
	ID         string
	Status     Status
	EndToEndID string // of the transfer itself (e2eId, rtrId), when known
	// ReadAt, when set, is when the PSP expects the transfer to change:
	// one still processing is read again then instead of on the polling
	// backoff, and a completed one is read again then because the PSP
	// will report it returned.
	ReadAt time.Time
	// Amount is the devolução's valor, in a payment's Refunds (zero where
	// the PSP does not say it: Send and Status leave it to the caller,
	// who knows what it sent).
	Amount pix.Amount
	// Nature is a payment's devolução's natureza as the PSP reports it
	// (NatureMEDFraud and the other MED ones for a return the scheme
	// imposed, ORIGINAL for one the receiver asked for); "" when absent.
	Nature string
}

// SentLister is what a PSP that lists the transfers sent from its account
// offers (Efí's list of sent Pix): the states of every payout requested in
// [from, to), in one reading of a few pages, instead of one call each.
// Each TransferState's ID is the payout's UUID.
type SentLister interface {
	SentBetween(ctx context.Context, from, to time.Time) ([]TransferState, error)
}

// UUIDFromHex is the inverse of HexID: the UUID whose 32 hex characters
// are hex, in lower case, or "" when hex is not 32 hex characters.
func UUIDFromHex(hex string) string {
	if len(hex) != 32 {
		return ""
	}
	b := make([]byte, 0, 36)
	for i := 0; i < 32; i++ {
		c := hex[i]
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			c += 'a' - 'A'
		default:
			return ""
		}
		if i == 8 || i == 12 || i == 16 || i == 20 {
			b = append(b, '-')
		}
		b = append(b, c)
	}
	return string(b)
}

// Payer is what a PSP whose payers pay on request offers (the sandbox):
// Pay makes the payment of exactly charge c and reports it, as a PSP
// reports a payment by webhook; the gateway then confirms it through
// ConfirmPayment before it credits anything.
type Payer interface {
	Pay(ctx context.Context, c Charge) (Payment, error)
}

// Provider is a PSP. Every method honours ctx and its own timeouts.
type Provider interface {
	// Name is NameSandbox, NameAPIPix or NameEfi.
	Name() string
	// Capabilities says what the provider can do.
	Capabilities() Capabilities
	// Start prepares the provider to serve (apipix: registers the webhook
	// URL with the PSP).
	Start(ctx context.Context) error
	// CreateCharge registers c at the PSP and returns its BR Code (the
	// payer's copy-and-paste code). ErrRejected or any other error: no
	// charge exists for the payer to pay.
	CreateCharge(ctx context.Context, c Charge) (brCode string, err error)
	// ChargePayments reads the charge txid at the PSP and returns the
	// payments made to it (none when unpaid).
	ChargePayments(ctx context.Context, txid string) ([]Payment, error)
	// CancelCharge removes the charge txid at the PSP so that it can no
	// longer be paid.
	CancelCharge(ctx context.Context, txid string) error
	// ConfirmPayment reads the payment e2eid at the PSP. ErrNotFound: no
	// such payment.
	ConfirmPayment(ctx context.Context, e2eid string) (Payment, error)
	// Received lists the payments received in [from, to), every page.
	Received(ctx context.Context, from, to time.Time) ([]Payment, error)
	// Send sends t once. ErrRejected: refused, nothing sent (for a resent
	// refund the PSP also refuses a reused id, so the caller reads Status
	// before it concludes). ErrRateLimited: not sent, try again after
	// RetryAfter. ErrUnsupported: payouts with apipix. Any other error:
	// unknown outcome.
	Send(ctx context.Context, t Transfer) (TransferState, error)
	// Status reads t at the PSP. ErrNotFound: the PSP does not know t, so
	// it was never sent.
	Status(ctx context.Context, t Transfer) (TransferState, error)
}

// HexID is the form of a pixgate UUID that PSPs accept as idEnvio and
// devolução id: its 32 hex characters without dashes.
func HexID(uuid string) string {
	b := make([]byte, 0, 32)
	for i := 0; i < len(uuid); i++ {
		if uuid[i] != '-' {
			b = append(b, uuid[i])
		}
	}
	return string(b)
}

// ValidEndToEnd reports whether id has the form of a PIX end-to-end id
// (and of a return's rtrId): 32 letters and digits.
func ValidEndToEnd(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// None is the Provider of a process that moves no money: the
// administration commands, which create clients and users but never pay.
// Naming it keeps the simulator from standing in for a PSP unnoticed.
type None struct{}

// ErrNone is what None's operations return.
var ErrNone = errors.New("provider: this process moves no money")

// Name returns "none".
func (None) Name() string { return "none" }

// Capabilities of None: nothing.
func (None) Capabilities() Capabilities { return Capabilities{TxIDLength: 25} }

// Start does nothing.
func (None) Start(context.Context) error { return nil }

// CreateCharge refuses with ErrNone.
func (None) CreateCharge(context.Context, Charge) (string, error) { return "", ErrNone }

// ChargePayments refuses with ErrNone.
func (None) ChargePayments(context.Context, string) ([]Payment, error) { return nil, ErrNone }

// CancelCharge refuses with ErrNone.
func (None) CancelCharge(context.Context, string) error { return ErrNone }

// ConfirmPayment refuses with ErrNone.
func (None) ConfirmPayment(context.Context, string) (Payment, error) { return Payment{}, ErrNone }

// Received refuses with ErrNone.
func (None) Received(context.Context, time.Time, time.Time) ([]Payment, error) { return nil, ErrNone }

// Send refuses with ErrNone.
func (None) Send(context.Context, Transfer) (TransferState, error) { return TransferState{}, ErrNone }

// Status refuses with ErrNone.
func (None) Status(context.Context, Transfer) (TransferState, error) { return TransferState{}, ErrNone }

var _ Provider = None{}
