package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	"github.com/pixgate/pixgate/internal/pix"
)

// Marketplaces in the workload: a merchant makes sub-accounts for its
// sellers and moves money to and from them. The auditor then proves each
// family's money moved only inside it (auditFamilies), besides every
// other rule, which holds for sub-accounts as for any client.

// maxSubAccounts is how many sub-accounts a merchant of the run makes.
const maxSubAccounts = 3

// subAccount has merchant o.client make a sub-account, retried with its
// external_id while the answer is unknown, so that it is made once.
func (w *Workload) subAccount(ctx context.Context, o op) {
	w.mu.Lock()
	n, known := len(w.subs[o.client]), w.accountOf[o.client] != ""
	w.mu.Unlock()
	if n >= maxSubAccounts {
		return
	}
	if !known {
		w.learnAccount(ctx, o.client)
	}
	ext := fmt.Sprintf("sim-seller-%d", o.n)
	req := map[string]any{"name": "Vendedor " + ext, "document": "52998224725", "external_id": ext}
	if w.hooks != nil {
		req["postbackUrl"] = w.hooks.URLNamed(ext) // where its pix.split.received goes
	}
	body, _ := json.Marshal(req)
	status, b, err := w.api.CallRetrying(ctx, 8, o.client, http.MethodPost, "/api/v1/accounts", nil, body)
	if err != nil || retryable(status, nil) {
		return
	}
	var v struct {
		Data struct {
			AccountID     string  `json:"account_id"`
			ClientID      string  `json:"client_id"`
			ClientSecret  *string `json:"client_secret"`
			WebhookSecret *string `json:"webhook_secret"`
		} `json:"data"`
	}
	if status != http.StatusCreated || json.Unmarshal(b, &v) != nil || v.Data.ClientSecret == nil {
		// A replay after a lost answer shows no secret: the sub-account
		// exists but cannot be acted as; the auditor still reads its books.
		if status != http.StatusCreated {
			w.issue("POST /api/v1/accounts as client %d answered %d: %s", o.client, status, b)
		}
		return
	}
	c := Credentials{ClientID: v.Data.ClientID, ClientSecret: *v.Data.ClientSecret}
	if v.Data.WebhookSecret != nil {
		c.WebhookSecret = *v.Data.WebhookSecret
	}
	i := w.api.AddClient(c)
	if w.hooks != nil {
		if err := w.hooks.Register(ext, i, c); err != nil {
			w.issue("sub-account %s: %v", v.Data.AccountID, err)
		}
	}
	w.mu.Lock()
	w.subs[o.client] = append(w.subs[o.client], subRec{client: i, account: v.Data.AccountID})
	w.mu.Unlock()
}

// subRec is a sub-account the workload made: its index for API.Call and
// its account_id.
type subRec struct {
	client  int
	account string
}

// transfer moves money between merchant o.client and one of its
// sub-accounts, either way, with an Idempotency-Key: 200, or 422 when the
// sender's balance does not hold it.
func (w *Workload) transfer(ctx context.Context, o op) {
	w.mu.Lock()
	subs := w.subs[o.client]
	parent := w.accountOf[o.client]
	w.mu.Unlock()
	if len(subs) == 0 {
		return
	}
	sub := subs[o.pick%len(subs)]
	from, to := o.client, sub.account
	if o.variant >= 60 {
		if parent == "" {
			return
		}
		from, to = sub.client, parent
	}
	key := fmt.Sprintf("sim-transfer-%d", o.n)
	body, _ := json.Marshal(map[string]any{"to_account_id": to, "amount": reais(o.amount), "description": "Repasse " + key})
	o.client, o.dup = from, 1
	rec := w.create(ctx, o, "transfer", "/api/v1/wallet/transfers", map[string]string{"Idempotency-Key": key}, "", body)
	if rec.Status != 0 && rec.Status != http.StatusOK && rec.Status != http.StatusUnprocessableEntity {
		w.issue("transfer %s answered %d: %s", key, rec.Status, rec.Response)
	}
}

// learnAccount reads merchant i's own account_id (GET /api/v1/accounts/me),
// which transfers from its sub-accounts name.
func (w *Workload) learnAccount(ctx context.Context, i int) {
	status, _, b, err := w.api.Call(ctx, i, http.MethodGet, "/api/v1/accounts/me", nil, nil)
	if err != nil || status != http.StatusOK {
		return
	}
	var v struct {
		Data struct {
			AccountID string `json:"account_id"`
		} `json:"data"`
	}
	if json.Unmarshal(b, &v) == nil && v.Data.AccountID != "" {
		w.mu.Lock()
		w.accountOf[i] = v.Data.AccountID
		w.mu.Unlock()
	}
}

// auditFamilies: money moves between a parent and its sub-accounts only
// through their clearing accounts, which sum to zero in each family, and
// every transfer is one row on each side for one amount.
func auditFamilies(b books) Check {
	c := Check{Name: checkFamilies}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	family := map[string]pix.Amount{}
	for id, parent := range b.ParentOf {
		head := id
		if parent != "" {
			head = parent
		}
		family[head] += b.Clearing[id]
	}
	heads := make([]string, 0, len(family))
	for h := range family {
		heads = append(heads, h)
	}
	sort.Strings(heads)
	for _, h := range heads {
		c.Checked++
		if family[h] != 0 {
			bad("the clearing accounts of client %s's family sum to %s", h, family[h])
		}
	}
	sides := map[string][]pix.Transaction{} // transfer rows by the sender's row id and amount
	for _, t := range b.Txs {
		if t.Type == pix.TypeTransfer {
			c.Checked++
			// The receiver's row names the sender's as its source.
			k := t.ID + " of " + t.Amount.String()
			if t.SourcePaymentID != "" {
				k = t.SourcePaymentID + " of " + t.Amount.String()
			}
			sides[k] = append(sides[k], t)
			if p := b.ParentOf[t.ClientID]; p == "" && !b.hasChild(t.ClientID) {
				bad("transfer row %s of client %s, which has no parent or sub-account", t.ID, t.ClientID)
			}
		}
	}
	for k, ts := range sides {
		if len(ts) != 2 || ts[0].ClientID == ts[1].ClientID {
			bad("transfer %s has %d rows", k, len(ts))
		}
	}
	return c
}

// hasChild reports whether client id is some client's parent.
func (b books) hasChild(id string) bool {
	for _, p := range b.ParentOf {
		if p == id {
			return true
		}
	}
	return false
}
