package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// Address is the payer's address.
type Address struct {
	Street       string `json:"street"`
	Number       string `json:"number"`
	Neighborhood string `json:"neighborhood"`
	City         string `json:"city"`
	State        string `json:"state"`
	ZipCode      string `json:"zipCode"`
}

// Payer is who is expected to pay a charge.
type Payer struct {
	Name        string   `json:"name"`
	Document    string   `json:"document"`
	PhoneNumber string   `json:"phoneNumber"`
	Email       string   `json:"email"`
	Address     *Address `json:"address"`
}

// Product is one line of a charge. Price stays raw JSON until validated.
type Product struct {
	Name     string          `json:"name"`
	Quantity string          `json:"quantity"`
	Price    json.RawMessage `json:"price"`
}

// ChargeRequest is the body of POST /api/v1/gateway/request-qrcode.
type ChargeRequest struct {
	Amount        json.RawMessage `json:"amount"`
	ExternalID    string          `json:"external_id"`
	Payer         *Payer          `json:"payer"`
	PayerQuestion string          `json:"payerQuestion"`
	PostbackURL   string          `json:"postbackUrl"`
	Products      []Product       `json:"products"`
	// Due, when sent, makes the charge one with a due date, payable until
	// the end of due.date + due.days_after (docs/due-dates.md).
	Due *pix.DueRequest `json:"due"`
	// Splits, when sent, shares what the charge brings among the caller's
	// sub-accounts once it is paid (docs/marketplace.md).
	Splits []pix.SplitRequest `json:"splits"`
}

// ChargeResponse is the 201 body of a created charge (and of its replays).
type ChargeResponse struct {
	PaymentID   string       `json:"payment_id"`
	ExternalID  string       `json:"external_id"`
	Amount      pix.Amount   `json:"amount"`
	QRCode      string       `json:"qrcode"`
	QRCodeImage string       `json:"qrcode_image"`
	Status      pix.TxStatus `json:"status"`
	ExpiresAt   string       `json:"expires_at"`
	// Due echoes the terms of a charge with a due date, and AmountDueToday
	// is what it costs on the day it was created; both are left out for
	// an immediate charge.
	Due            *pix.Due  `json:"due,omitempty"`
	AmountDueToday *DueToday `json:"amount_due_today,omitempty"`
}

// DueToday is amount_due_today: what a charge with a due date costs when
// paid today (São Paulo date), written as null once it can no longer be
// paid (it is paid, cancelled, or past its last day).
type DueToday struct {
	Amount  pix.Amount
	Payable bool
}

// MarshalJSON writes the amount in reais, or null when not Payable.
func (d DueToday) MarshalJSON() ([]byte, error) {
	if !d.Payable {
		return []byte("null"), nil
	}
	return d.Amount.MarshalJSON()
}

// dueToday is t's amount_due_today on day: nil for an immediate charge.
func dueToday(t pix.Transaction, day pix.Date) *DueToday {
	if t.Due == nil {
		return nil
	}
	a, ok := t.AmountDueOn(day)
	return &DueToday{Amount: a, Payable: ok}
}

// issues collects field problems for one 400 response.
type issues []pix.FieldIssue

func (is *issues) add(field, issue string) {
	*is = append(*is, pix.FieldIssue{Field: field, Issue: issue})
}

func (is *issues) text(field, v string, maxLen int) {
	switch {
	case strings.TrimSpace(v) == "":
		is.add(field, "is required")
	case utf8.RuneCountInString(v) > maxLen:
		is.add(field, fmt.Sprintf("must be at most %d characters", maxLen))
	case !utf8.ValidString(v) || strings.ContainsAny(v, "\x00"):
		is.add(field, "must be valid text")
	case !pix.PlainText(v):
		is.add(field, pix.IssuePlainText)
	}
}

// plain records the issue of an optional text field holding a character
// that pix.PlainText refuses.
func (is *issues) plain(field, v string) {
	if !pix.PlainText(v) {
		is.add(field, pix.IssuePlainText)
	}
}

func (is *issues) check(field, v string, valid func(string) bool, issue string) {
	if v == "" {
		is.add(field, "is required")
	} else if !valid(v) {
		is.add(field, issue)
	}
}

func (is *issues) amount(field string, raw json.RawMessage) pix.Amount {
	if len(raw) == 0 || string(raw) == "null" {
		is.add(field, "is required")
		return 0
	}
	a, err := pix.ParseAmount(raw)
	if err != nil {
		is.add(field, "must be a number in reais, greater than 0, at most 1000000.00, with at most two decimals")
		return 0
	}
	return a
}

func (is *issues) err() error {
	if len(*is) == 0 {
		return nil
	}
	return &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters", Details: *is}
}

// Issues of a webhook URL (postbackUrl, callbackUrl).
const (
	issueWebhookURLProduction = "must be an absolute https URL"
	issueWebhookURLSandbox    = "must be an absolute http or https URL"
	// IssueWebhookDestination is the issue of a URL that is well formed but
	// may not be called (docs/api.md, Input rules).
	IssueWebhookDestination = "destination not allowed"
)

// WebhookURLIssue returns what is wrong with u as a webhook destination, or
// "" when it is acceptable: an absolute http(s) URL (https only in
// production, unless CheckWebhookURL accepts an http URL to an internal
// receiver) that CheckWebhookURL, when set, does not refuse. An error of
// CheckWebhookURL with a DestinationNotAllowed method reporting true (the
// webhook guard's refusals) yields IssueWebhookDestination; any other one
// means the URL is not acceptable as written.
func (s *Service) WebhookURLIssue(u string) string {
	syntax := issueWebhookURLSandbox
	if s.Env == EnvProduction {
		syntax = issueWebhookURLProduction
	}
	if len(u) > 2048 || !utf8.ValidString(u) {
		return syntax
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.User != nil || p.Hostname() == "" || (p.Scheme != "http" && p.Scheme != "https") {
		return syntax
	}
	if s.CheckWebhookURL == nil {
		if p.Scheme != "https" && s.Env == EnvProduction {
			return syntax
		}
		return ""
	}
	if err := s.CheckWebhookURL(u); err != nil {
		var refusal interface{ DestinationNotAllowed() bool }
		if errors.As(err, &refusal) && refusal.DestinationNotAllowed() {
			return IssueWebhookDestination
		}
		return syntax
	}
	return ""
}

// webhookURL records the issue of a required webhook URL field, if any.
func (is *issues) webhookURL(s *Service, field, u string) {
	if u == "" {
		is.add(field, "is required")
	} else if issue := s.WebhookURLIssue(u); issue != "" {
		is.add(field, issue)
	}
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// validateCharge checks r and returns its amount and, for a charge with a
// due date, its terms, judged on the real date.
func (s *Service) validateCharge(r *ChargeRequest) (pix.Amount, *pix.Due, error) {
	return s.validateChargeOn(r, "", s.Today())
}

// validateChargeOn is validateCharge of a request sent with Idempotency-Key
// key, with today the São Paulo date on the calling client's clock (a due
// date is "today or later" on it).
func (s *Service) validateChargeOn(r *ChargeRequest, key string, today pix.Date) (pix.Amount, *pix.Due, error) {
	var is issues
	amount := is.amount("amount", r.Amount)
	is.check("external_id", r.ExternalID, pix.ValidExternalID, "must be 1 to 64 characters of A-Z a-z 0-9 . _ : -")
	if r.Payer == nil {
		is.add("payer", "is required")
	} else {
		p := r.Payer
		is.text("payer.name", p.Name, 200)
		is.check("payer.document", p.Document, pix.ValidDocument, "must be a valid CPF or CNPJ, digits only")
		is.check("payer.phoneNumber", p.PhoneNumber, pix.ValidPhone, "must be area code and number, 10 or 11 digits, optionally prefixed by +55")
		is.check("payer.email", p.Email, pix.ValidEmail, "must be a valid e-mail address")
		if p.Address == nil {
			is.add("payer.address", "is required")
		} else {
			a := p.Address
			is.text("payer.address.street", a.Street, 200)
			is.text("payer.address.number", a.Number, 20)
			is.text("payer.address.neighborhood", a.Neighborhood, 100)
			is.text("payer.address.city", a.City, 100)
			is.check("payer.address.state", a.State, pix.ValidUF, "must be a Brazilian UF such as SP")
			is.check("payer.address.zipCode", a.ZipCode, pix.ValidCEP, "must be a CEP of 8 digits")
		}
	}
	is.text("payerQuestion", r.PayerQuestion, 140)
	if key != "" && !pix.ValidIdempotencyKey(key) {
		is.add("Idempotency-Key", "must be 1 to 255 visible ASCII characters")
	}
	is.webhookURL(s, "postbackUrl", r.PostbackURL)
	switch {
	case r.Products == nil:
		is.add("products", "is required")
	case len(r.Products) == 0:
		is.add("products", "must not be empty")
	case len(r.Products) > 100:
		is.add("products", "must have at most 100 items")
	}
	for i, p := range r.Products {
		f := fmt.Sprintf("products[%d].", i)
		is.text(f+"name", p.Name, 200)
		is.check(f+"quantity", p.Quantity, func(q string) bool {
			return isDigits(q) && len(q) <= 9 && strings.TrimLeft(q, "0") != ""
		}, "must be a string of digits greater than 0")
		is.amount(f+"price", p.Price)
	}
	var due *pix.Due
	if r.Due != nil {
		d, dueIssues := r.Due.Parse(amount, today)
		is = append(is, dueIssues...)
		if len(dueIssues) == 0 && d.Deadline(s.loc).UTC().Year() > 9999 {
			// expires_at is written with a four-digit year.
			is.add("due.date", "must leave due.date + due.days_after before 9999-12-31")
		}
		due = &d
	}
	if r.Splits != nil {
		_, splitIssues := pix.ParseSplits("splits", r.Splits, amount)
		is = append(is, splitIssues...)
	}
	return amount, due, is.err()
}

// msgNoDueCharges is the 422 for a charge with a due date when the
// provider cannot register one.
const msgNoDueCharges = "Charges with a due date are not available with this provider"

// CreateCharge validates and creates a charge for client c, or replays the
// charge already created with the same external_id or Idempotency-Key (in
// holds both, and the request's digest they are compared by). Errors: EInvalid (with details),
// EIdempotencyMismatch.
func (s *Service) CreateCharge(ctx context.Context, c pix.Client, in Idempotent[ChargeRequest]) (resp ChargeResponse, replayed bool, err error) {
	r := in.Req
	amount, due, err := s.validateChargeOn(r, in.Key, s.clocks.Today(ctx))
	if err != nil {
		if r.Due != nil {
			// Due terms are checked against today ("today or later"): a
			// retry, after the due date, of a charge accepted before it
			// replays the charge rather than fail.
			if resp, ok := s.replayAccepted(ctx, c, in); ok {
				return resp, true, nil
			}
		}
		return ChargeResponse{}, false, err
	}
	if _, canDue := s.psp.(provider.DueCharger); due != nil && !canDue {
		return ChargeResponse{}, false, pix.Errorf(pix.EUnprocessable, msgNoDueCharges)
	}
	hash := in.Hash
	if hash == "" {
		return ChargeResponse{}, false, pix.InvalidBody()
	}
	var splits []pix.Split
	if r.Splits != nil {
		parsed, _ := pix.ParseSplits("splits", r.Splits, amount)
		if splits, err = s.cashin.ResolveSplits(ctx, c, "splits", parsed); err != nil {
			return ChargeResponse{}, false, err
		}
	}
	// The unique indexes detect a duplicate at the insert; a charge
	// registered at a PSP also looks for it before (below).
	find := func(q finder) (pix.Transaction, bool, error) {
		return findPrevious(ctx, q, c.ID, r.ExternalID, in.Key)
	}

	// A charge registered at the PSP is created there first, and a replay
	// must not create a second cob: look for the earlier charge before
	// that. A charge the provider only writes locally (a static BR Code)
	// leaves nothing behind, so the insert's unique indexes find a replay.
	if s.cashin.LookFirst() {
		prev, ok, err := find(s.db)
		if err != nil {
			return ChargeResponse{}, false, fmt.Errorf("create charge: %w", err)
		}
		if ok {
			return s.replayCharge(prev, hash, r.ExternalID)
		}
	}
	now := s.clocks.At(ctx)
	txid, code, expires, err := s.registerCharge(ctx, c, r, amount, due, now)
	if err != nil {
		return ChargeResponse{}, false, err
	}
	details, err := json.Marshal(struct {
		Payer         *Payer    `json:"payer"`
		PayerQuestion string    `json:"payerQuestion"`
		Products      []Product `json:"products"`
	}{r.Payer, r.PayerQuestion, r.Products})
	if err != nil {
		return ChargeResponse{}, false, fmt.Errorf("create charge: %w", err)
	}
	t := pix.NewCashIn(s.newUUID(), c, amount, txid, now, expires)
	t.ExternalID, t.IdempotencyKey, t.RequestHash, t.QRCode = r.ExternalID, in.Key, hash, code
	t.CallbackURL, t.Details, t.Due = r.PostbackURL, string(details), due
	// The row is the whole change (no money moves until it is paid), so it
	// is written by one autocommitted INSERT: one round trip. On a
	// duplicate, PostgreSQL has waited for the other insert to commit, so
	// the earlier charge is readable.
	inserted, err := s.insertCharge(ctx, t, splits)
	// Without a stored charge (the write failed, or a concurrent
	// duplicate won the insert) no charge exists to pay the cob for.
	s.cashin.Stored(ctx, txid, due != nil, err == nil && inserted)
	if err != nil {
		return ChargeResponse{}, false, fmt.Errorf("create charge: %w", err)
	}
	if !inserted {
		prev, ok, err := find(s.db)
		if err == nil && !ok {
			err = fmt.Errorf("charge %s conflicted with no visible row", t.ID)
		}
		if err != nil {
			return ChargeResponse{}, false, fmt.Errorf("create charge: %w", err)
		}
		return s.replayCharge(prev, hash, r.ExternalID)
	}
	image, err := s.QR.Base64PNG(code)
	if err != nil {
		return ChargeResponse{}, false, fmt.Errorf("create charge: render QR: %w", err)
	}
	return s.chargeResponse(t, image), false, nil
}

// insertCharge stores charge t and, in the same transaction, its splits;
// it reports false when a duplicate holds t's keys. A charge without splits
// is one autocommitted INSERT: one round trip.
func (s *Service) insertCharge(ctx context.Context, t pix.Transaction, splits []pix.Split) (bool, error) {
	if len(splits) == 0 {
		return s.db.InsertTransaction(ctx, t)
	}
	inserted := false
	err := s.db.Write(ctx, func(tx *store.Tx) error {
		ok, err := tx.InsertTransaction(ctx, t)
		if err != nil || !ok {
			inserted = false
			return err
		}
		inserted = true
		return tx.InsertSplits(ctx, t.ID, splits)
	})
	return inserted && err == nil, err
}

// registerCharge registers the charge r of client c (of amount, with due
// terms when due is set) at the provider, its cob's intent committed
// first, and returns its txid, BR Code and expiry.
func (s *Service) registerCharge(ctx context.Context, c pix.Client, r *ChargeRequest, amount pix.Amount, due *pix.Due,
	now time.Time) (txid, code string, expires time.Time, err error) {
	txid, err = s.cashin.NewTxID()
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("create charge: %w", err)
	}
	// Committed before the PSP call: if this process dies before the
	// charge is stored, the sweep withdraws the cob (orphan.go).
	if err := s.cashin.Intend(ctx, txid, c.ID, now, due != nil); err != nil {
		return "", "", time.Time{}, fmt.Errorf("create charge: %w", err)
	}
	expires = now.Add(s.ChargeTTL)
	create := func(ctx context.Context) (string, error) {
		return s.psp.CreateCharge(ctx, provider.Charge{TxID: txid, Amount: amount, TTL: s.ChargeTTL,
			PayerName: r.Payer.Name, PayerDocument: r.Payer.Document, Question: r.PayerQuestion})
	}
	if due != nil {
		// A charge with a due date lives until the end of its last day,
		// whatever PIXGATE_CHARGE_TTL says.
		expires = due.Deadline(s.loc).UTC()
		create = func(ctx context.Context) (string, error) {
			a := r.Payer.Address
			return s.psp.(provider.DueCharger).CreateDueCharge(ctx, provider.DueCharge{TxID: txid, Amount: amount, Due: *due, Question: r.PayerQuestion,
				Payer: provider.DuePayer{Name: r.Payer.Name, Document: r.Payer.Document, Street: a.Street, Number: a.Number,
					City: a.City, State: a.State, ZipCode: a.ZipCode}})
		}
	}
	code, err = s.cashin.Register(ctx, txid, create)
	if err != nil {
		return "", "", time.Time{}, err // a cob the PSP may have created is left to the sweep
	}
	return txid, code, expires, nil
}

// replayAccepted answers the earlier charge of client c created with the
// same key and the same body as r, if there is one.
func (s *Service) replayAccepted(ctx context.Context, c pix.Client, in Idempotent[ChargeRequest]) (ChargeResponse, bool) {
	r, hash := in.Req, in.Hash
	if hash == "" {
		return ChargeResponse{}, false
	}
	prev, ok, err := findPrevious(ctx, s.db, c.ID, r.ExternalID, in.Key)
	if err != nil || !ok || prev.RequestHash != hash {
		return ChargeResponse{}, false
	}
	resp, _, err := s.replayCharge(prev, hash, r.ExternalID)
	return resp, err == nil
}

// replayCharge answers a charge request whose key matched prev: prev's
// response when the bodies match, else the 422 naming the key that clashed.
func (s *Service) replayCharge(prev pix.Transaction, hash, externalID string) (ChargeResponse, bool, error) {
	if prev.RequestHash != hash || prev.Type != pix.TypeCashin {
		return ChargeResponse{}, false, pix.Mismatch(foundBy(prev, externalID))
	}
	image, err := s.QR.Base64PNG(prev.QRCode)
	if err != nil {
		return ChargeResponse{}, false, fmt.Errorf("replay charge: render QR: %w", err)
	}
	return s.chargeResponse(prev, image), true, nil
}

// chargeResponse is the creation response, which never changes: a replay
// shows PENDING even if the charge has been paid since, and the amount due
// on the day the charge was created.
func (s *Service) chargeResponse(t pix.Transaction, image string) ChargeResponse {
	t.Status = pix.StatusPending
	return ChargeResponse{PaymentID: t.ID, ExternalID: t.ExternalID, Amount: t.Amount, QRCode: t.QRCode,
		QRCodeImage: image, Status: pix.StatusPending, ExpiresAt: pix.FormatTime(t.ExpiresAt),
		Due: t.Due, AmountDueToday: dueToday(t, s.dateOf(t.CreatedAt))}
}

// finder reads previous transactions; *store.DB and *store.Tx are finders.
type finder interface {
	TransactionByExternalID(ctx context.Context, clientID, externalID string) (pix.Transaction, error)
	TransactionByIdempotencyKey(ctx context.Context, clientID, key string) (pix.Transaction, error)
}

// findPrevious returns the client's transaction created with externalID or
// with the idempotency key, if either was given and exists.
func findPrevious(ctx context.Context, q finder, clientID, externalID, key string) (pix.Transaction, bool, error) {
	if externalID != "" {
		t, err := q.TransactionByExternalID(ctx, clientID, externalID)
		if err == nil || !errors.Is(err, store.ErrNotFound) {
			return t, err == nil, err
		}
	}
	if key != "" {
		t, err := q.TransactionByIdempotencyKey(ctx, clientID, key)
		if err == nil || !errors.Is(err, store.ErrNotFound) {
			return t, err == nil, err
		}
	}
	return pix.Transaction{}, false, nil
}
