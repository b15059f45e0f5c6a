package pix

import (
	"encoding/json"
	"time"
	"unicode/utf8"
)

// DisputeReason is why a payer's PSP contested a received Pix (MED).
type DisputeReason string

// Reasons of a dispute.
const (
	ReasonFraud              DisputeReason = "FRAUD"
	ReasonOperationalFailure DisputeReason = "OPERATIONAL_FAILURE"
	ReasonPixAutomatico      DisputeReason = "PIX_AUTOMATICO"
)

// Valid reports whether r is one of the reasons.
func (r DisputeReason) Valid() bool {
	return r == ReasonFraud || r == ReasonOperationalFailure || r == ReasonPixAutomatico
}

// ReasonOfNature is the reason of a MED devolução by its natureza:
// MED_FRAUDE → FRAUD, MED_OPERACIONAL → OPERATIONAL_FAILURE,
// MED_PIX_AUTOMATICO → PIX_AUTOMATICO; none (or another) → FRAUD.
func ReasonOfNature(natureza string) DisputeReason {
	switch natureza {
	case "MED_OPERACIONAL":
		return ReasonOperationalFailure
	case "MED_PIX_AUTOMATICO":
		return ReasonPixAutomatico
	}
	return ReasonFraud
}

// ValidNature reports whether n is a MED natureza a sandbox return may name.
func ValidNature(n string) bool {
	return n == "MED_FRAUDE" || n == "MED_OPERACIONAL" || n == "MED_PIX_AUTOMATICO"
}

// DisputeStatus is where a dispute stands.
type DisputeStatus string

// Statuses of a dispute.
const (
	DisputeOpen   DisputeStatus = "OPEN"
	DisputeClosed DisputeStatus = "CLOSED"
)

// Valid reports whether s is one of the statuses.
func (s DisputeStatus) Valid() bool { return s == DisputeOpen || s == DisputeClosed }

// Outcome is how a closed dispute ended.
type Outcome string

// Outcomes of a closed dispute.
const (
	OutcomeReleased Outcome = "released"
	OutcomeReturned Outcome = "returned"
)

// DisputeDefense is the merchant's answer to a dispute.
type DisputeDefense struct {
	Accept        bool
	Justification string
	At            time.Time
}

// Dispute is one MED contest of a received Pix (docs/med.md), as stored.
type Dispute struct {
	ID        string
	ClientID  string
	PaymentID string // the charge contested
	Amount    Amount // what is contested
	// Blocked is what of Amount is held from the owner's available balance
	// now (later credits fill it up to Amount while the dispute is OPEN).
	Blocked        Amount
	Reason         DisputeReason
	Status         DisputeStatus
	RespondBy      time.Time
	Defense        *DisputeDefense
	Outcome        Outcome // "" while OPEN
	ReturnedAmount Amount
	OpenedAt       time.Time
	ClosedAt       *time.Time
	// PSPID is the PSP's id of the infraction ("" when none); ReturnID the
	// PSP's id of the devolução that returned it ("" when none).
	PSPID    string
	ReturnID string
}

// Unfilled is what of d's amount is still to be blocked.
func (d Dispute) Unfilled() Amount {
	if d.Status != DisputeOpen || d.Blocked >= d.Amount {
		return 0
	}
	return d.Amount - d.Blocked
}

// DisputeView is a dispute as the API shows it.
type DisputeView struct {
	DisputeID      string        `json:"dispute_id"`
	PaymentID      string        `json:"payment_id"`
	Amount         Amount        `json:"amount"`
	Reason         DisputeReason `json:"reason"`
	Status         DisputeStatus `json:"status"`
	RespondBy      string        `json:"respond_by"`
	Defense        *DefenseView  `json:"defense"`
	Outcome        *Outcome      `json:"outcome"`
	ReturnedAmount Amount        `json:"returned_amount"`
	OpenedAt       string        `json:"opened_at"`
	ClosedAt       *string       `json:"closed_at"`
}

// DefenseView is a dispute's defense as the API shows it.
type DefenseView struct {
	Accept        bool   `json:"accept"`
	Justification string `json:"justification"`
	At            string `json:"at"`
}

// View is d as the API shows it.
func (d Dispute) View() DisputeView {
	v := DisputeView{DisputeID: d.ID, PaymentID: d.PaymentID, Amount: d.Amount, Reason: d.Reason, Status: d.Status,
		RespondBy: FormatTime(d.RespondBy), ReturnedAmount: d.ReturnedAmount, OpenedAt: FormatTime(d.OpenedAt)}
	if d.Defense != nil {
		v.Defense = &DefenseView{Accept: d.Defense.Accept, Justification: d.Defense.Justification, At: FormatTime(d.Defense.At)}
	}
	if d.Outcome != "" {
		o := d.Outcome
		v.Outcome = &o
	}
	if d.ClosedAt != nil {
		at := FormatTime(*d.ClosedAt)
		v.ClosedAt = &at
	}
	return v
}

// DisputeSummary is a dispute as a charge's lookup lists it.
type DisputeSummary struct {
	DisputeID string        `json:"dispute_id"`
	Status    DisputeStatus `json:"status"`
	Amount    Amount        `json:"amount"`
}

// MaxJustification is the longest defense justification, in characters.
const MaxJustification = 2000

// ParseDefense reads the body of a dispute's defense, {"accept": bool,
// "justification": "1–2000 characters"}. Errors: a *Error EInvalid with
// details naming each bad field.
func ParseDefense(body []byte) (accept bool, justification string, err error) {
	var raw struct {
		Accept        json.RawMessage `json:"accept"`
		Justification json.RawMessage `json:"justification"`
	}
	if json.Unmarshal(body, &raw) != nil {
		return false, "", invalid(FieldIssue{Field: "body", Issue: "must be a JSON object"})
	}
	var is []FieldIssue
	if json.Unmarshal(raw.Accept, &accept) != nil || len(raw.Accept) == 0 || string(raw.Accept) == "null" {
		is = append(is, FieldIssue{Field: "accept", Issue: "must be true or false"})
	}
	switch {
	case len(raw.Justification) == 0 || string(raw.Justification) == "null":
		is = append(is, FieldIssue{Field: "justification", Issue: "is required"})
	case json.Unmarshal(raw.Justification, &justification) != nil:
		is = append(is, FieldIssue{Field: "justification", Issue: "must be a string"})
	case utf8.RuneCountInString(justification) < 1 || utf8.RuneCountInString(justification) > MaxJustification ||
		!ValidText(justification):
		is = append(is, FieldIssue{Field: "justification", Issue: "must be 1 to 2000 characters"})
	}
	if len(is) > 0 {
		return false, "", invalid(is...)
	}
	return accept, justification, nil
}

// SandboxDispute is the body of the sandbox's dispute action.
type SandboxDispute struct {
	Amount Amount        // 0: the paid amount
	Reason DisputeReason // FRAUD when not given
}

// SandboxResolve is the body of the sandbox's resolve action.
type SandboxResolve struct {
	Outcome Outcome
	Amount  Amount // returned: 0 means the disputed amount
}

// SandboxReturn is the body of the sandbox's MED return action.
type SandboxReturn struct {
	Amount Amount // 0: what is left of the payment
	Nature string // "" for none
}

// ParseSandboxDispute reads {"amount"?, "reason"?}.
func ParseSandboxDispute(body []byte) (SandboxDispute, error) {
	var raw struct {
		Amount json.RawMessage `json:"amount"`
		Reason *string         `json:"reason"`
	}
	out := SandboxDispute{Reason: ReasonFraud}
	if err := sandboxBody(body, &raw); err != nil {
		return out, err
	}
	var is []FieldIssue
	out.Amount = optionalAmount(&is, raw.Amount)
	if raw.Reason != nil {
		out.Reason = DisputeReason(*raw.Reason)
		if !out.Reason.Valid() {
			is = append(is, FieldIssue{Field: "reason", Issue: "must be one of FRAUD, OPERATIONAL_FAILURE, PIX_AUTOMATICO"})
		}
	}
	if len(is) > 0 {
		return out, invalid(is...)
	}
	return out, nil
}

// ParseSandboxResolve reads {"outcome": "released" | "returned", "amount"?}.
func ParseSandboxResolve(body []byte) (SandboxResolve, error) {
	var raw struct {
		Outcome *string         `json:"outcome"`
		Amount  json.RawMessage `json:"amount"`
	}
	var out SandboxResolve
	if err := sandboxBody(body, &raw); err != nil {
		return out, err
	}
	var is []FieldIssue
	if raw.Outcome == nil || (*raw.Outcome != string(OutcomeReleased) && *raw.Outcome != string(OutcomeReturned)) {
		is = append(is, FieldIssue{Field: "outcome", Issue: "must be released or returned"})
	} else {
		out.Outcome = Outcome(*raw.Outcome)
	}
	out.Amount = optionalAmount(&is, raw.Amount)
	if len(is) > 0 {
		return out, invalid(is...)
	}
	return out, nil
}

// ParseSandboxReturn reads {"amount"?, "natureza"?}.
func ParseSandboxReturn(body []byte) (SandboxReturn, error) {
	var raw struct {
		Amount json.RawMessage `json:"amount"`
		Nature *string         `json:"natureza"`
	}
	var out SandboxReturn
	if err := sandboxBody(body, &raw); err != nil {
		return out, err
	}
	var is []FieldIssue
	out.Amount = optionalAmount(&is, raw.Amount)
	if raw.Nature != nil {
		out.Nature = *raw.Nature
		if !ValidNature(out.Nature) {
			is = append(is, FieldIssue{Field: "natureza", Issue: "must be one of MED_FRAUDE, MED_OPERACIONAL, MED_PIX_AUTOMATICO"})
		}
	}
	if len(is) > 0 {
		return out, invalid(is...)
	}
	return out, nil
}

// sandboxBody decodes a sandbox action's body into v; an empty body is
// an empty object (every field has a default).
func sandboxBody(body []byte, v any) error {
	if len(body) == 0 {
		return nil
	}
	if json.Unmarshal(body, v) != nil {
		return invalid(FieldIssue{Field: "body", Issue: "must be a JSON object"})
	}
	return nil
}

// optionalAmount parses an optional amount in reais (0 when absent),
// recording its issue in is.
func optionalAmount(is *[]FieldIssue, raw json.RawMessage) Amount {
	if len(raw) == 0 || string(raw) == "null" {
		return 0
	}
	a, err := ParseAmount(raw)
	if err != nil {
		*is = append(*is, FieldIssue{Field: "amount", Issue: "must be a number in reais, greater than 0, at most 1000000.00, with at most two decimals"})
		return 0
	}
	return a
}

// invalid is the 400 of a body with the given issues.
func invalid(is ...FieldIssue) error {
	return &Error{Code: EInvalid, Message: "Invalid request parameters", Details: is}
}
