// Package account holds sub-accounts and the transfers between a parent
// and its sub-accounts (docs/marketplace.md): a parent
// creates, lists and reads its sub-accounts and rotates their secrets,
// each sub-account a full client of its own; money moves between a parent
// and its own sub-accounts instantly, in the ledger only. It sits below
// gateway, as cashin, recurrence and transfer do; splits of charges build
// on its store and account vocabulary.
package account

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// Messages of the accounts' answers (docs/api.md).
const (
	MsgAccountNotFound   = "Account not found"
	MsgNoNestedAccounts  = "A sub-account cannot create sub-accounts"
	MsgAccountsOK        = "Accounts listed successfully."
	issueExternalID      = "must be 1 to 64 characters of A-Z a-z 0-9 . _ : -"
	issueDocument        = "must be a valid CPF (11 digits) or CNPJ (14 digits), digits only"
	issueIdempotencyKey  = "must be 1 to 255 visible ASCII characters"
	maxNameLength        = 100
	maxDescriptionLength = 140
)

// Config is what a Service is built from.
type Config struct {
	// DB is the store; required.
	DB *store.DB
	// Writer mints the ids of transactions and postings; required.
	Writer *outbox.Writer
	// Clocks is the real time and the clients' clocks; required.
	Clocks *clock.Clients
	// Rand is the source of the sub-accounts' secrets; required.
	Rand io.Reader
	// Log receives the service's logs; required.
	Log *slog.Logger
	// WebhookURLIssue says what is wrong with a postbackUrl ("" when it
	// may be called); required.
	WebhookURLIssue func(string) string
}

// Service is sub-accounts and transfers.
type Service struct {
	db         *store.DB
	w          *outbox.Writer
	clocks     *clock.Clients
	rand       io.Reader
	log        *slog.Logger
	webhookURL func(string) string
}

// New returns the Service c describes, or what c lacks.
func New(c Config) (*Service, error) {
	var errs []error
	if c.DB == nil || c.Writer == nil || c.Clocks == nil || c.Rand == nil || c.Log == nil || c.WebhookURLIssue == nil {
		errs = append(errs, errors.New("account: DB, Writer, Clocks, Rand, Log and WebhookURLIssue are required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Service{db: c.DB, w: c.Writer, clocks: c.Clocks, rand: c.Rand, log: c.Log, webhookURL: c.WebhookURLIssue}, nil
}

// CreateRequest is the body of POST /api/v1/accounts.
type CreateRequest struct {
	Name        string  `json:"name"`
	Document    string  `json:"document"`
	ExternalID  *string `json:"external_id"`
	PostbackURL string  `json:"postbackUrl"`
}

// Created is the data of a created sub-account: its secrets are shown in
// the first answer only, null in a replay.
type Created struct {
	AccountID     string  `json:"account_id"`
	ClientID      string  `json:"client_id"`
	ClientSecret  *string `json:"client_secret"`
	WebhookSecret *string `json:"webhook_secret"`
	Name          string  `json:"name"`
	Document      string  `json:"document"`
	ExternalID    *string `json:"external_id"`
	ParentID      string  `json:"parent_id"`
}

// Me is the data of GET /api/v1/accounts/me.
type Me struct {
	AccountID string  `json:"account_id"`
	ParentID  *string `json:"parent_id"`
	Name      string  `json:"name"`
	Document  *string `json:"document"`
}

// View is a sub-account as its parent reads it, never with a secret;
// AvailableCents only in the answer about one account.
type View struct {
	AccountID      string  `json:"account_id"`
	ClientID       string  `json:"client_id"`
	Name           string  `json:"name"`
	Document       string  `json:"document"`
	ExternalID     *string `json:"external_id"`
	ParentID       string  `json:"parent_id"`
	PostbackURL    *string `json:"postbackUrl"`
	Status         string  `json:"status"`
	CreatedAt      string  `json:"created_at"`
	AvailableCents *int64  `json:"available_cents,omitempty"`
}

// Rotated is the answer of a sub-account's secret rotation.
type Rotated struct {
	AccountID    string `json:"account_id"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// view is sub-account c of the parent whose account_id is parent.
func view(c pix.Client, parent string) View {
	return View{AccountID: c.AccountID, ClientID: c.ID, Name: c.Name, Document: c.Document, ExternalID: pix.OrNull(c.ExternalID),
		ParentID: parent, PostbackURL: pix.OrNull(c.PostbackURL), Status: string(c.Status), CreatedAt: pix.FormatTime(c.CreatedAt)}
}

// Me is client c as GET /api/v1/accounts/me shows it: parent_id is its
// parent's account_id, null for a client that is no sub-account.
func (s *Service) Me(ctx context.Context, c pix.Client) (Me, error) {
	m := Me{AccountID: c.AccountID, Name: c.Name, Document: pix.OrNull(c.Document)}
	if c.ParentID != "" {
		p, err := s.db.Client(ctx, c.ParentID)
		if err != nil {
			return Me{}, fmt.Errorf("account me: parent: %w", err)
		}
		m.ParentID = &p.AccountID
	}
	return m, nil
}

// issues gathers a request's problems, field by field.
type issues []pix.FieldIssue

func (is *issues) add(field, issue string) {
	*is = append(*is, pix.FieldIssue{Field: field, Issue: issue})
}

// text checks a text field of at most maxLen characters; required says
// whether it may be empty.
func (is *issues) text(field, v string, maxLen int, required bool) {
	switch {
	case strings.TrimSpace(v) == "" && required:
		is.add(field, "is required")
	case utf8.RuneCountInString(v) > maxLen:
		is.add(field, fmt.Sprintf("must be at most %d characters", maxLen))
	case !pix.ValidText(v):
		is.add(field, "must be valid text")
	case !pix.PlainText(v):
		is.add(field, pix.IssuePlainText)
	}
}

// externalID checks an optional external_id, an empty one counting as not
// sent, and returns it ("" when none).
func (is *issues) externalID(p *string) string {
	if p == nil || *p == "" {
		return ""
	}
	if !pix.ValidExternalID(*p) {
		is.add("external_id", issueExternalID)
	}
	return *p
}

// Create makes a sub-account of parent: a client of parent's environment
// with its own credentials and ledger accounts, parent's fee rules and
// parent's id as its parent. It is idempotent by external_id (docs/api.md#idempotency): the same
// body answers the first sub-account with its secrets null (replayed is
// true), another body the 422 of pix.Mismatch. Errors: EInvalid (400 with
// details), EUnprocessable for a parent that is itself a sub-account,
// EIdempotencyMismatch, EConflict.
func (s *Service) Create(ctx context.Context, parent pix.Client, in pix.Idempotent[CreateRequest]) (Created, bool, error) {
	if parent.ParentID != "" {
		return Created{}, false, pix.Errorf(pix.EUnprocessable, MsgNoNestedAccounts)
	}
	r := in.Req
	var is issues
	is.text("name", r.Name, maxNameLength, true)
	switch {
	case r.Document == "":
		is.add("document", "is required")
	case !pix.ValidDocument(r.Document):
		is.add("document", issueDocument)
	}
	ext := is.externalID(r.ExternalID)
	if r.PostbackURL != "" {
		if issue := s.webhookURL(r.PostbackURL); issue != "" {
			is.add("postbackUrl", issue)
		}
	}
	if len(is) > 0 {
		return Created{}, false, &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters", Details: is}
	}
	if in.Hash == "" {
		return Created{}, false, pix.InvalidBody()
	}
	cr, err := pix.NewCredentials(s.rand, parent.Environment)
	if err != nil {
		return Created{}, false, fmt.Errorf("create account: %w", err)
	}
	c := pix.Client{ID: cr.ClientID, AccountID: cr.AccountID, Name: strings.TrimSpace(r.Name), Environment: parent.Environment,
		SecretHash: pix.HashSecret(cr.ClientSecret), WebhookSecret: cr.WebhookSecret,
		CashinFee: parent.CashinFee, PayoutFee: parent.PayoutFee, Status: pix.ClientActive, CreatedAt: s.clocks.Now(),
		ParentID: parent.ID, Document: r.Document, ExternalID: ext, PostbackURL: r.PostbackURL, RequestHash: in.Hash}
	err = s.db.Write(ctx, func(tx *store.Tx) error { return tx.InsertClient(ctx, c) })
	if errors.Is(err, store.ErrConflict) && ext != "" {
		prev, err := s.db.SubAccountByExternalID(ctx, parent.ID, ext)
		if errors.Is(err, store.ErrNotFound) {
			return Created{}, false, pix.InProgress(true)
		}
		if err != nil {
			return Created{}, false, fmt.Errorf("create account: replay: %w", err)
		}
		if prev.RequestHash != in.Hash {
			return Created{}, false, pix.Mismatch(true)
		}
		return created(prev, parent, nil, nil), true, nil
	}
	if err != nil {
		return Created{}, false, fmt.Errorf("create account: %w", err)
	}
	s.log.InfoContext(ctx, "sub-account created", "parent_id", parent.ID, "client_id", c.ID, "account_id", c.AccountID)
	return created(c, parent, &cr.ClientSecret, &cr.WebhookSecret), false, nil
}

func created(c, parent pix.Client, secret, webhookSecret *string) Created {
	return Created{AccountID: c.AccountID, ClientID: c.ID, ClientSecret: secret, WebhookSecret: webhookSecret, Name: c.Name,
		Document: c.Document, ExternalID: pix.OrNull(c.ExternalID), ParentID: parent.AccountID}
}

// ListQuery is the raw query of GET /api/v1/accounts.
type ListQuery struct{ Limit, Cursor string }

// List returns a page of parent's sub-accounts, newest first, and the
// next cursor ("" on the last page). Errors: EInvalid for a bad limit or
// cursor.
func (s *Service) List(ctx context.Context, parent pix.Client, q ListQuery) ([]View, string, error) {
	limit, is := pix.PageParams(q.Limit, q.Cursor)
	if len(is) > 0 {
		return nil, "", pix.ListError(is)
	}
	rows, next, err := s.db.SubAccounts(ctx, parent.ID, q.Cursor, limit)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", pix.ListError([]pix.FieldIssue{{Field: "cursor", Issue: pix.IssuePageCursor}})
	}
	if err != nil {
		return nil, "", fmt.Errorf("list accounts: %w", err)
	}
	out := make([]View, len(rows))
	for i, c := range rows {
		out[i] = view(c, parent.AccountID)
	}
	return out, next, nil
}

// child returns parent's sub-account whose account_id is accountID;
// another client's, a sibling's, the parent's own or an unknown one is
// ENotFound alike, so that an account_id tells nothing of other families.
func (s *Service) child(ctx context.Context, parent pix.Client, accountID string) (pix.Client, error) {
	if !pix.CanonicalID(accountID) {
		return pix.Client{}, pix.Errorf(pix.ENotFound, MsgAccountNotFound)
	}
	c, err := s.db.ClientByAccountID(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && c.ParentID != parent.ID) {
		return pix.Client{}, pix.Errorf(pix.ENotFound, MsgAccountNotFound)
	}
	if err != nil {
		return pix.Client{}, fmt.Errorf("account %s: %w", accountID, err)
	}
	return c, nil
}

// Get returns parent's sub-account accountID with its available balance.
// Errors: ENotFound.
func (s *Service) Get(ctx context.Context, parent pix.Client, accountID string) (View, error) {
	c, err := s.child(ctx, parent, accountID)
	if err != nil {
		return View{}, err
	}
	b, err := s.db.Balances(ctx, c.ID)
	if err != nil {
		return View{}, fmt.Errorf("account %s: balance: %w", accountID, err)
	}
	v := view(c, parent.AccountID)
	avail := int64(b[ledger.Available])
	v.AvailableCents = &avail
	return v, nil
}

// RotateSecret gives parent's sub-account accountID a new client secret;
// the old one stops working at once. Errors: ENotFound.
func (s *Service) RotateSecret(ctx context.Context, parent pix.Client, accountID string) (Rotated, error) {
	c, err := s.child(ctx, parent, accountID)
	if err != nil {
		return Rotated{}, err
	}
	secret, err := pix.NewClientSecret(s.rand, c.Environment)
	if err != nil {
		return Rotated{}, fmt.Errorf("rotate account secret: %w", err)
	}
	if err := s.db.Write(ctx, func(tx *store.Tx) error { return tx.SetClientSecret(ctx, c.ID, pix.HashSecret(secret)) }); err != nil {
		return Rotated{}, fmt.Errorf("rotate account secret: %w", err)
	}
	s.log.InfoContext(ctx, "sub-account secret rotated", "parent_id", parent.ID, "client_id", c.ID)
	return Rotated{AccountID: c.AccountID, ClientID: c.ID, ClientSecret: secret}, nil
}

// now is the time on the clock of the client ctx is for.
func (s *Service) now(ctx context.Context) time.Time { return s.clocks.At(ctx) }

// details is the JSON of a transfer's descriptive fields.
func details(description string) (string, error) {
	b, err := json.Marshal(struct {
		Description string `json:"description,omitempty"`
	}{description})
	if err != nil {
		return "", fmt.Errorf("transfer details: %w", err)
	}
	return string(b), nil
}
