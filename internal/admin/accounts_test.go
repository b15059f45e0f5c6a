package admin_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
)

// subAccount creates a sub-account of parent through the API (POST
// /api/v1/accounts) and returns its credentials and account_id.
func (b *bundle) subAccount(parent backoffice.Credentials, name, ext, document string) (backoffice.Credentials, string) {
	b.t.Helper()
	status, body := b.api(parent, "POST", "/api/v1/accounts", map[string]any{"name": name, "document": document,
		"external_id": ext, "postbackUrl": "https://seller.example.com/webhooks/pix"})
	require.Equal(b.t, http.StatusCreated, status, "%v", body)
	d := body["data"].(map[string]any)
	return backoffice.Credentials{ClientID: d["client_id"].(string), ClientSecret: d["client_secret"].(string)}, d["account_id"].(string)
}

// transfer moves amount from the sender to the account toAccountID
// through the API (POST /api/v1/wallet/transfers).
func (b *bundle) transfer(from backoffice.Credentials, toAccountID, amount string) {
	b.t.Helper()
	status, body := b.api(from, "POST", "/api/v1/wallet/transfers", map[string]any{"to_account_id": toAccountID, "amount": json.Number(amount)})
	require.Equal(b.t, http.StatusOK, status, "%v", body)
}

// paid creates a charge of amount for cred and pays it in the sandbox.
func (b *bundle) paid(cred backoffice.Credentials, ext, amount string) string {
	b.t.Helper()
	id := b.charge(cred, ext, amount)
	status, body := b.api(cred, "POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
	require.Equal(b.t, http.StatusOK, status, "%v", body)
	return id
}

// family is a marketplace made through the API: the bundle's client as
// parent with two sub-accounts, and another parent with one; money moved
// between the parent and its first sub-account, which also has a charge
// paid and one pending.
type family struct {
	parent, other            backoffice.Credentials
	subA, subB, subC         backoffice.Credentials
	accA, accB, accC         string
	paidA, pendingA, paidPar string
}

func newFamily(b *bundle) family {
	b.t.Helper()
	other, err := b.bo.CreateClient(b.t.Context(), backoffice.ClientParams{Name: "Outro Marketplace"})
	require.NoError(b.t, err)
	f := family{parent: b.merchant, other: other}
	f.subA, f.accA = b.subAccount(f.parent, "Vendedor Ana", "ana", "52998224725")
	f.subB, f.accB = b.subAccount(f.parent, "Vendedor Bruno", "bruno", "11222333000181")
	f.subC, f.accC = b.subAccount(other, "Vendedor Carla", "carla", "52998224725")
	f.paidPar = b.paid(f.parent, "venda-1", "10.00")
	b.transfer(f.parent, f.accA, "3.00")
	b.transfer(f.subA, b.accountID(f.parent), "1.00")
	f.paidA = b.paid(f.subA, "venda-ana", "5.00")
	f.pendingA = b.charge(f.subA, "aberta-ana", "7.00")
	return f
}

// accountID is cred's own account_id (GET /api/v1/accounts/me).
func (b *bundle) accountID(cred backoffice.Credentials) string {
	b.t.Helper()
	status, body := b.api(cred, "GET", "/api/v1/accounts/me", nil)
	require.Equal(b.t, http.StatusOK, status, "%v", body)
	return body["data"].(map[string]any)["account_id"].(string)
}

var familyBody = regexp.MustCompile(`(?s)<tbody class="family" data-testid="family" data-client-id="([^"]+)">(.*?)</tbody>`)

// rowIDs returns the data-client-id of every element of body marked with
// data-testid testid, in order.
func rowIDs(body, testid string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`data-testid="`+testid+`" data-client-id="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// The operators' list of clients groups each parent with its sub-accounts
// beneath it, with account_id, the document masked and the available
// balance; a sub-account's pages say whose it is and link to the parent;
// and the overviews count the transfers and the split shares, out of the
// parent and into its sub-accounts, so that each day adds up.
func TestOperatorSeesFamilies(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		f := newFamily(b)
		c := b.web()
		c.login("ops@example.com", b.user("ops@example.com", pix.RoleOperator, ""))

		p := c.get("/admin/clients?lang=pt-BR")
		require.Equal(t, http.StatusOK, p.status, p.body)
		groups := map[string]string{}
		var order []string
		for _, m := range familyBody.FindAllStringSubmatch(p.body, -1) {
			groups[m[1]] = m[2]
			order = append(order, m[1])
		}
		require.Equal(t, []string{f.parent.ClientID, f.other.ClientID}, order, "one group per top-level client, oldest first")
		require.Equal(t, []string{f.parent.ClientID}, rowIDs(groups[f.parent.ClientID], "parent"))
		require.Equal(t, []string{f.subA.ClientID, f.subB.ClientID}, rowIDs(groups[f.parent.ClientID], "sub-account"))
		require.Equal(t, []string{f.subC.ClientID}, rowIDs(groups[f.other.ClientID], "sub-account"))
		g := groups[f.parent.ClientID]
		require.Contains(t, g, f.accA)
		require.Contains(t, g, "***.982.247-**", "Ana's CPF, masked")
		require.Contains(t, g, "**.***.333/0001-**", "Bruno's CNPJ, masked")
		require.NotContains(t, p.body, "52998224725")
		require.NotContains(t, p.body, "11222333000181")
		// The parent: 10,00 − 3,00 + 1,00; Ana: 3,00 − 1,00 + 5,00.
		require.Regexp(t, `data-client-id="`+f.parent.ClientID+`">(?s:.*?)data-testid="available">R\$ 8,00<`, g)
		require.Regexp(t, `data-client-id="`+f.subA.ClientID+`">(?s:.*?)data-testid="available">R\$ 7,00<`, g)

		sub := c.get("/admin/c/" + f.subA.ClientID + "/")
		require.Equal(t, http.StatusOK, sub.status, sub.body)
		require.Contains(t, sub.body, `href="/admin/c/`+f.parent.ClientID+`/" data-testid="parent-link">Loja Exemplo</a>`)
		require.NotContains(t, sub.body, `data-testid="read-only"`, "operators change what they see")
		require.Contains(t, sub.body, `data-testid="nav-settings"`)
		require.NotContains(t, sub.body, `data-testid="nav-accounts"`, "a sub-account has no sub-accounts")
		require.Equal(t, http.StatusNotFound, c.get("/admin/c/"+f.subA.ClientID+"/accounts").status)
		detail := c.get("/admin/c/" + f.subA.ClientID + "/transactions/" + f.pendingA)
		require.Equal(t, http.StatusOK, detail.status, detail.body)
		require.Contains(t, detail.body, `data-testid="sandbox-pay"`, "operators keep their actions on a sub-account")

		par := c.get("/admin/c/" + f.parent.ClientID + "/?lang=pt-BR")
		require.Equal(t, http.StatusOK, par.status, par.body)
		require.Contains(t, par.body, `href="/admin/c/`+f.parent.ClientID+`/accounts" data-testid="overview-accounts"`)
		require.NotContains(t, par.body, `data-testid="sub-of"`, "a parent is no sub-account")
		require.Contains(t, par.body, `data-testid="flow-transfers-in">R$ 1,00<`)
		require.Contains(t, par.body, `data-testid="flow-transfers-out">R$ 3,00<`)
		require.Contains(t, par.body, `data-testid="opening">R$ 0,00<`)
		require.Contains(t, par.body, `data-testid="closing">R$ 8,00<`, "0 + 10,00 + 1,00 − 3,00")
		require.NotContains(t, par.body, `data-testid="flow-splits-out"`, "no split yet: no split rows")

		// A split charge of the parent's: R$ 20,00 paid, 25 % to Ana and
		// 10 % to Bruno (no fee in the sandbox) leave the parent as splits
		// and arrive as Ana's and Bruno's; every day still adds up.
		split := validCharge("venda-split", "20.00")
		split["splits"] = []any{map[string]any{"account_id": f.accA, "percent": json.Number("25")},
			map[string]any{"account_id": f.accB, "percent": json.Number("10")}}
		status, body := b.api(f.parent, "POST", "/api/v1/gateway/request-qrcode", split)
		require.Equal(t, http.StatusCreated, status, "%v", body)
		status, body = b.api(f.parent, "POST", "/api/v1/sandbox/charges/"+body["payment_id"].(string)+"/pay", nil)
		require.Equal(t, http.StatusOK, status, "%v", body)
		par = c.get("/admin/c/" + f.parent.ClientID + "/?lang=pt-BR")
		require.Equal(t, http.StatusOK, par.status, par.body)
		require.Equal(t, "R$ 30,00", field(t, par.body, "volume-in"))
		require.Equal(t, "R$ 7,00", field(t, par.body, "flow-splits-out"))
		require.Equal(t, "R$ 0,00", field(t, par.body, "flow-splits-in"))
		require.Contains(t, par.body, "Splits enviados")
		require.Equal(t, "R$ 21,00", field(t, par.body, "closing"), "0 + 30,00 + 1,00 − 3,00 − 7,00")
		ana := c.get("/admin/c/" + f.subA.ClientID + "/?lang=en")
		require.Equal(t, http.StatusOK, ana.status, ana.body)
		require.Equal(t, "R$ 5.00", field(t, ana.body, "flow-splits-in"))
		require.Equal(t, "R$ 0.00", field(t, ana.body, "flow-splits-out"))
		require.Contains(t, ana.body, "Splits in")
		require.Equal(t, "R$ 3.00", field(t, ana.body, "flow-transfers-in"))
		require.Equal(t, "R$ 12.00", field(t, ana.body, "closing"), "0 + 5.00 + 3.00 − 1.00 + 5.00")
		all := c.get("/admin/?lang=pt-BR")
		require.Equal(t, http.StatusOK, all.status, all.body)
		require.Equal(t, "R$ 7,00", field(t, all.body, "flow-splits-in"), "over every client, what is split out arrives")
		require.Equal(t, "R$ 7,00", field(t, all.body, "flow-splits-out"))
		list := c.get("/admin/c/" + f.parent.ClientID + "/accounts")
		require.Equal(t, http.StatusOK, list.status, list.body)
		require.Equal(t, []string{f.subB.ClientID, f.subA.ClientID}, rowIDs(list.body, "sub-account"), "newest first")
	})
}

// A parent's merchant user reads its sub-accounts — the list, each one's
// overview, transactions and a transaction — with no action offered and
// every action refused; another parent's sub-accounts are 404, as is the
// page of sub-accounts to a sub-account's own user.
func TestMerchantReadsItsSubAccounts(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		f := newFamily(b)
		c := b.web()
		tok := c.login("shop@example.com", b.user("shop@example.com", pix.RoleMerchant, f.parent.ClientID))

		home := c.get("/admin/c/" + f.parent.ClientID + "/?lang=en")
		require.Equal(t, http.StatusOK, home.status)
		require.Contains(t, home.body, `href="/admin/c/`+f.parent.ClientID+`/accounts"`, "the menu has Sub-accounts")
		list := c.get("/admin/c/" + f.parent.ClientID + "/accounts?lang=en")
		require.Equal(t, http.StatusOK, list.status, list.body)
		require.Equal(t, []string{f.subB.ClientID, f.subA.ClientID}, rowIDs(list.body, "sub-account"))
		require.Contains(t, list.body, f.accA)
		require.Contains(t, list.body, "Vendedor Ana")
		require.Regexp(t, `data-client-id="`+f.subA.ClientID+`">(?s:.*?)data-testid="available">R\$ 7\.00<`, list.body)
		require.NotContains(t, list.body, f.subC.ClientID, "another parent's sub-account")
		require.NotContains(t, list.body, "Vendedor Carla")

		base := "/admin/c/" + f.subA.ClientID
		for _, path := range []string{base + "/", base + "/transactions", base + "/transactions/" + f.paidA, base + "/transactions/" + f.pendingA} {
			p := c.get(path)
			require.Equal(t, http.StatusOK, p.status, "%s: %s", path, p.body)
			require.Contains(t, p.body, `data-testid="read-only"`, path)
			require.Contains(t, p.body, `data-testid="parent-link"`, path)
			for _, action := range []string{"nav-settings", "nav-recurrences", "nav-disputes", "nav-statement", "sandbox-pay", "sandbox-expire", "resend"} {
				require.NotContains(t, p.body, `data-testid="`+action+`"`, "%s offers %s", path, action)
			}
			require.Equal(t, 1, strings.Count(p.body, `method="post"`), "%s: only the logout form", path)
		}
		txs := c.get(base + "/transactions")
		require.Contains(t, txs.body, f.paidA, "the sub-account's transactions are listed")
		paid := c.get(base + "/transactions/" + f.paidA)
		require.Contains(t, paid.body, `data-testid="event"`, "its webhooks are shown, without resend")

		for _, path := range []string{base + "/settings", base + "/recurrences/x", base + "/accounts"} {
			require.Equal(t, http.StatusNotFound, c.get(path).status, path)
		}
		for _, path := range []string{base + "/settings/secret", base + "/settings/webhook-secret", base + "/transactions/" + f.pendingA + "/pay",
			base + "/transactions/" + f.pendingA + "/expire"} {
			require.Equal(t, http.StatusNotFound, c.post(path, url.Values{"csrf": {tok}}).status, path)
		}
		detail := c.get(base + "/transactions/" + f.paidA)
		event := regexp.MustCompile(`data-event-id="([^"]+)"`).FindStringSubmatch(detail.body)
		require.NotNil(t, event)
		require.Equal(t, http.StatusNotFound, c.post(base+"/events/"+event[1]+"/retry", url.Values{"csrf": {tok}}).status)
		pending, err := b.gw.Charge(t.Context(), pix.Client{ID: f.subA.ClientID}, f.pendingA)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPending, pending.Status, "the refused pay changed nothing")

		for _, path := range []string{"/admin/c/" + f.subC.ClientID + "/", "/admin/c/" + f.subC.ClientID + "/transactions",
			"/admin/c/" + f.other.ClientID + "/", "/admin/c/" + f.other.ClientID + "/accounts", "/admin/clients"} {
			require.Equal(t, http.StatusNotFound, c.get(path).status, path)
		}

		// A sub-account's own user: no page of sub-accounts, and the
		// parent named but not opened.
		s := b.web()
		s.login("ana@example.com", b.user("ana@example.com", pix.RoleMerchant, f.subA.ClientID))
		own := s.get(base + "/")
		require.Equal(t, http.StatusOK, own.status)
		require.NotContains(t, own.body, `data-testid="nav-accounts"`)
		require.Contains(t, own.body, `data-testid="parent-name">Loja Exemplo<`)
		require.NotContains(t, own.body, `data-testid="parent-link"`)
		require.NotContains(t, own.body, `data-testid="read-only"`, "its own pages")
		require.Contains(t, own.body, `data-testid="nav-settings"`)
		for _, path := range []string{base + "/accounts", "/admin/c/" + f.parent.ClientID + "/", "/admin/c/" + f.parent.ClientID + "/accounts",
			"/admin/c/" + f.subB.ClientID + "/"} {
			require.Equal(t, http.StatusNotFound, s.get(path).status, path)
		}
	})
}
