package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Accounts are a marketplace's sub-accounts (docs/marketplace.md): each
// is a client of its own, with its own credentials, balance, payouts,
// history, statement and webhooks, made and listed by its parent.
type Accounts struct{ c *Client }

// Accounts is the sub-accounts of this client, and its own account.
func (c *Client) Accounts() *Accounts { return &Accounts{c: c} }

// AccountMe is the calling client's own account.
type AccountMe struct {
	Response  `json:"-"`
	AccountID string `json:"account_id"` // what transfers and splits name
	// ParentID is the parent's account_id, "" for a client that is not a
	// sub-account; Document is "" for a client an operator made.
	ParentID string `json:"parent_id"`
	Name     string `json:"name"`
	Document string `json:"document"`
}

// Me reads the calling client's account (GET /api/v1/accounts/me).
func (a *Accounts) Me(ctx context.Context) (*AccountMe, error) {
	var out struct {
		Data struct {
			AccountID string  `json:"account_id"`
			ParentID  *string `json:"parent_id"`
			Name      string  `json:"name"`
			Document  *string `json:"document"`
		} `json:"data"`
	}
	resp, err := a.c.do(ctx, call{method: http.MethodGet, path: "/api/v1/accounts/me", policy: readPolicy}, &out)
	if err != nil {
		return nil, err
	}
	d := out.Data
	return &AccountMe{Response: resp, AccountID: d.AccountID, ParentID: deref(d.ParentID), Name: d.Name, Document: deref(d.Document)}, nil
}

// AccountRequest creates a sub-account (POST /api/v1/accounts).
type AccountRequest struct {
	Name     string `json:"name"`     // 1–100 characters
	Document string `json:"document"` // CPF (11 digits) or CNPJ (14 digits)
	// ExternalID is your optional reference, unique among your
	// sub-accounts: with it, a repeated request answers the first
	// sub-account again (its secrets then empty), so the call is retried
	// after an unknown outcome; without it, it is not.
	ExternalID  string `json:"external_id,omitempty"`
	PostbackURL string `json:"postbackUrl,omitempty"`
}

// CreatedAccount is a new sub-account with its credentials: ClientSecret
// and WebhookSecret are shown once, and are empty in a replay
// (Response.IdempotentReplayed).
type CreatedAccount struct {
	Response      `json:"-"`
	AccountID     string `json:"account_id"`
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	WebhookSecret string `json:"webhook_secret"`
	Name          string `json:"name"`
	Document      string `json:"document"`
	ExternalID    string `json:"external_id"`
	ParentID      string `json:"parent_id"`
}

// Create makes a sub-account of this client. A sub-account cannot make
// sub-accounts (422).
func (a *Accounts) Create(ctx context.Context, r AccountRequest) (*CreatedAccount, error) {
	p := unsafePolicy
	if r.ExternalID != "" {
		p = creationPolicy
	}
	var out struct {
		Data struct {
			AccountID     string  `json:"account_id"`
			ClientID      string  `json:"client_id"`
			ClientSecret  *string `json:"client_secret"`
			WebhookSecret *string `json:"webhook_secret"`
			Name          string  `json:"name"`
			Document      string  `json:"document"`
			ExternalID    *string `json:"external_id"`
			ParentID      string  `json:"parent_id"`
		} `json:"data"`
	}
	resp, err := a.c.do(ctx, call{method: http.MethodPost, path: "/api/v1/accounts", body: r, policy: p}, &out)
	if err != nil {
		return nil, err
	}
	d := out.Data
	return &CreatedAccount{Response: resp, AccountID: d.AccountID, ClientID: d.ClientID, ClientSecret: deref(d.ClientSecret),
		WebhookSecret: deref(d.WebhookSecret), Name: d.Name, Document: d.Document, ExternalID: deref(d.ExternalID), ParentID: d.ParentID}, nil
}

// Account is a sub-account as its parent reads it (never with a secret).
type Account struct {
	Response    `json:"-"`
	AccountID   string    `json:"account_id"`
	ClientID    string    `json:"client_id"`
	Name        string    `json:"name"`
	Document    string    `json:"document"`
	ExternalID  *string   `json:"external_id"`
	ParentID    string    `json:"parent_id"`
	PostbackURL *string   `json:"postbackUrl"`
	Status      string    `json:"status"` // active or disabled
	CreatedAt   time.Time `json:"created_at"`
	// Available is its available balance: read by Get only, zero in lists.
	Available Amount `json:"-"`
}

// Get reads one sub-account with its available balance
// (GET /api/v1/accounts/{account_id}); another client's, a sibling's or
// an unknown one is a 404.
func (a *Accounts) Get(ctx context.Context, accountID string) (*Account, error) {
	var out struct {
		Data struct {
			Account
			AvailableCents int64 `json:"available_cents"`
		} `json:"data"`
	}
	resp, err := a.c.do(ctx, call{method: http.MethodGet, path: "/api/v1/accounts/" + url.PathEscape(accountID), policy: readPolicy}, &out)
	if err != nil {
		return nil, err
	}
	acct := out.Data.Account
	acct.Response, acct.Available = resp, Centavos(out.Data.AvailableCents)
	return &acct, nil
}

// AccountQuery pages the sub-accounts' list.
type AccountQuery struct {
	Limit  int    // 1–100; 0 means the server's default (50)
	Cursor string // from AccountPage.NextCursor
}

// AccountPage is one page of sub-accounts, newest first.
type AccountPage struct {
	Response
	Data       []Account
	NextCursor string // "" on the last page
}

// ListPage reads one page of this client's sub-accounts
// (GET /api/v1/accounts).
func (a *Accounts) ListPage(ctx context.Context, q AccountQuery) (*AccountPage, error) {
	v := url.Values{}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out struct {
		Data       []Account `json:"data"`
		NextCursor *string   `json:"next_cursor"`
	}
	resp, err := a.c.do(ctx, call{method: http.MethodGet, path: "/api/v1/accounts", query: v, policy: readPolicy}, &out)
	if err != nil {
		return nil, err
	}
	return &AccountPage{Response: resp, Data: out.Data, NextCursor: deref(out.NextCursor)}, nil
}

// List iterates over every sub-account, newest first, reading page after
// page; it stops at the first error, which it yields.
func (a *Accounts) List(ctx context.Context, q AccountQuery) iter.Seq2[Account, error] {
	return allPages(func(cursor string) ([]Account, string, error) {
		q.Cursor = cursor
		p, err := a.ListPage(ctx, q)
		if err != nil {
			return nil, "", err
		}
		return p.Data, p.NextCursor, nil
	}, q.Cursor)
}

// RotatedSecret is a sub-account's new client secret, shown once.
type RotatedSecret struct {
	Response     `json:"-"`
	AccountID    string `json:"account_id"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// RotateSecret gives a sub-account a new client secret
// (POST /api/v1/accounts/{account_id}/rotate-secret); the old one stops
// working at once. It is not repeated after a network error (a repeat
// would rotate again): on one, rotate again deliberately.
func (a *Accounts) RotateSecret(ctx context.Context, accountID string) (*RotatedSecret, error) {
	var out struct {
		Data RotatedSecret `json:"data"`
	}
	resp, err := a.c.do(ctx, call{method: http.MethodPost, path: "/api/v1/accounts/" + url.PathEscape(accountID) + "/rotate-secret",
		policy: unsafePolicy}, &out)
	if err != nil {
		return nil, err
	}
	out.Data.Response = resp
	return &out.Data, nil
}

// TransferRequest moves money between this client and its parent or one
// of its sub-accounts (POST /api/v1/wallet/transfers).
type TransferRequest struct {
	ToAccountID string `json:"to_account_id"`
	Amount      Amount `json:"amount"` // greater than 0, at most R$ 1,000,000.00
	Description string `json:"description,omitempty"`
	// ExternalID is your optional reference, unique per client across
	// charges, payouts and transfers; like IdempotencyKey it makes a
	// repeated request replay the first one.
	ExternalID string `json:"external_id,omitempty"`
	// IdempotencyKey is sent as the Idempotency-Key header; generated when
	// empty, but then only this call's own retries share it.
	IdempotencyKey string `json:"-"`
}

// Transfer is a completed transfer.
type Transfer struct {
	Response      `json:"-"`
	TransferID    string    `json:"transfer_id"`
	FromAccountID string    `json:"from_account_id"`
	ToAccountID   string    `json:"to_account_id"`
	Amount        Amount    `json:"amount"`
	Status        string    `json:"status"` // COMPLETED
	CreatedAt     time.Time `json:"created_at"`
}

// Transfer moves r.Amount from this client's available balance to
// r.ToAccountID at once, in the ledger only. Anyone but this client's
// parent or sub-accounts is a 404; more than available a 422. An error
// whose outcome is unknown is a *RetryError carrying the Idempotency-Key
// to repeat it with.
func (c *Client) Transfer(ctx context.Context, r TransferRequest) (*Transfer, error) {
	var out struct {
		Data Transfer `json:"data"`
	}
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/wallet/transfers", body: r,
		idemKey: keyOr(r.IdempotencyKey), policy: creationPolicy}, &out)
	if err != nil {
		return nil, err
	}
	out.Data.Response = resp
	return &out.Data, nil
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
