package admin_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/admin"
	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit/chromium"
)

// seedCycle is one cycle charge a seeded recurrence has.
type seedCycle struct {
	status   pix.TxStatus
	attempts int
	retryOn  pix.Date
}

// recurrence stores, through the store, a monthly recurrence of client
// clientID created at at (R$ 49.90 from 2026-01-31 to 2026-12-31, retried
// in 7 days) and one cash-in charge per cycle, due on the calendar's dates;
// it returns the recurrence and its cycles' payment ids.
func (b *bundle) recurrence(clientID, ext string, at time.Time, status pix.RecurrenceStatus, by pix.CancelledBy, cycles ...seedCycle) (pix.Recurrence, []string) {
	b.t.Helper()
	ctx := context.Background()
	at = at.Truncate(time.Millisecond)
	sched := pix.Schedule{Frequency: pix.Monthly, Start: pix.Date{Year: 2026, Month: time.January, Day: 31}, End: pix.Date{Year: 2026, Month: time.December, Day: 31}}
	r := pix.Recurrence{ID: uuid.NewString(), ClientID: clientID, ExternalID: ext, RequestHash: "h-" + ext, PSPID: "RR1234567820260131" + strings.ReplaceAll(uuid.NewString(), "-", "")[:11],
		Status: status, CancelledBy: by, Payer: pix.RecurrencePayer{Name: "Maria <b>Souza</b>", Document: "52998224725"},
		Contract: "CTR-" + ext, Description: "Plano mensal", Schedule: sched, Amount: 4990, Retry: pix.RetryThreeInSevenDays,
		QRCode: "00020101021226", CallbackURL: "https://merchant.example.com/webhooks/pix", NextCycle: len(cycles), CreatedAt: at, UpdatedAt: at}
	if d, ok := sched.Due(len(cycles)); ok {
		r.NextDue = d
	}
	var ids []string
	require.NoError(b.t, b.db.Write(ctx, func(tx *store.Tx) error {
		ok, err := tx.InsertRecurrence(ctx, r)
		if err != nil {
			return err
		}
		require.True(b.t, ok)
		for n, c := range cycles {
			due, ok := sched.Due(n)
			require.True(b.t, ok)
			t := pix.Transaction{ID: uuid.NewString(), ClientID: clientID, Type: pix.TypeCashin, RequestHash: "h", Status: c.status,
				Amount: r.Amount, CreatedAt: at.Add(time.Duration(n) * time.Second), ExpiresAt: at.Add(30 * 24 * time.Hour),
				TxID: strings.ReplaceAll(uuid.NewString(), "-", ""), RecurrenceID: r.ID}
			if c.status == pix.StatusPaid {
				t.ConfirmedAt, t.PaidAmount = t.CreatedAt.Add(time.Minute), t.Amount
			}
			if err := tx.CreateTransaction(ctx, t); err != nil {
				return err
			}
			if err := tx.InsertCycle(ctx, pix.Cycle{PaymentID: t.ID, RecurrenceID: r.ID, Number: n, DueDate: due,
				Attempts: c.attempts, RetryOn: c.retryOn, UpdatedAt: at}); err != nil {
				return err
			}
			ids = append(ids, t.ID)
		}
		return nil
	}))
	return r, ids
}

// TestRecurrencePages: the list shows a client's recurrences newest first
// with their terms and where they stand; the detail shows the terms and
// every cycle, linking each to its charge, whose page links back; in both
// languages, with the payer's name escaped.
func TestRecurrencePages(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		c := b.web()
		c.login("ops@example.com", b.user("ops@example.com", pix.RoleOperator, ""))
		now := b.clock.Now()
		rejected, _ := b.recurrence(b.merchant.ClientID, "sub-rejected", now.Add(-2*time.Hour), pix.RecurrenceRejected, "")
		old, _ := b.recurrence(b.merchant.ClientID, "sub-old", now.Add(-time.Hour), pix.RecurrenceCancelled, pix.CancelledByPayer)
		rec, ids := b.recurrence(b.merchant.ClientID, "sub-1001", now, pix.RecurrenceApproved, "",
			seedCycle{status: pix.StatusPaid, attempts: 1},
			seedCycle{status: pix.StatusCancelled, attempts: 4},
			seedCycle{status: pix.StatusPending, attempts: 1, retryOn: pix.Date{Year: 2026, Month: time.April, Day: 1}})

		list := "/admin/recurrences?client=" + url.QueryEscape(b.merchant.ClientID)
		p := c.get(list + "&lang=en")
		require.Equal(t, http.StatusOK, p.status, p.body)
		require.Equal(t, []string{rec.ID, old.ID, rejected.ID}, recRows(p.body), "newest first")
		require.Equal(t, "Maria <b>Souza</b>", field(t, p.body, "rec-payer"), "escaped, shown as text")
		require.NotContains(t, p.body, "<b>Souza</b>")
		require.Equal(t, "Monthly", field(t, p.body, "rec-frequency"))
		require.Equal(t, "R$ 49.90", field(t, p.body, "rec-amount"))
		require.Equal(t, []string{"2026-04-30", "—", "—"}, fields(p.body, "rec-next-due"),
			"the 4th cycle (April has no 31st); none for the cancelled and the rejected one")
		require.Equal(t, "by the payer", field(t, p.body, "rec-cancelled-by"))
		require.Equal(t, "/admin/c/"+b.merchant.ClientID+"/recurrences/"+rec.ID, attr(t, p.body, "rec-link"))
		require.Contains(t, p.body, `data-testid="nav-recurrences"`)
		p = c.get(list + "&lang=pt-BR")
		require.Equal(t, "Mensal", field(t, p.body, "rec-frequency"))
		require.Equal(t, "R$ 49,90", field(t, p.body, "rec-amount"))
		require.Equal(t, "30/04/2026", field(t, p.body, "rec-next-due"))

		// The status filter.
		p = c.get(list + "&status=CANCELLED")
		require.Equal(t, []string{old.ID}, recRows(p.body))
		p = c.get(list + "&status=FINISHED")
		require.Contains(t, p.body, `data-testid="no-recurrences"`)
		p = c.get(list + "&status=bogus")
		require.Len(t, recRows(p.body), 3, "an unknown status filters nothing")

		// The detail.
		detail := "/admin/c/" + b.merchant.ClientID + "/recurrences/" + rec.ID
		p = c.get(detail + "?lang=en")
		require.Equal(t, http.StatusOK, p.status, p.body)
		require.Equal(t, rec.ID, field(t, p.body, "rec-id"))
		require.Equal(t, "sub-1001", field(t, p.body, "rec-external"))
		require.Equal(t, "CTR-sub-1001", field(t, p.body, "rec-contract"))
		require.Equal(t, "Plano mensal", field(t, p.body, "rec-description"))
		require.Equal(t, "2026-01-31", field(t, p.body, "rec-start"))
		require.Equal(t, "2026-12-31", field(t, p.body, "rec-end"))
		require.Equal(t, "up to 3 in 7 days (1st, 3rd and 5th day after the due date)", field(t, p.body, "rec-retry"))
		require.Equal(t, "—", field(t, p.body, "rec-first"))
		require.Equal(t, rec.PSPID, field(t, p.body, "rec-psp-id"))
		require.Contains(t, p.body, "APPROVED")
		require.NotContains(t, p.body, `data-testid="rec-cancelled-by"`)
		require.Equal(t, []string{"1", "2", "3"}, fields(p.body, "cycle-number"), "counted from 1")
		require.Equal(t, []string{"2026-01-31", "2026-02-28", "2026-03-31"}, fields(p.body, "cycle-due"))
		require.Equal(t, []string{"R$ 49.90", "R$ 49.90", "R$ 49.90"}, fields(p.body, "cycle-amount"))
		require.Equal(t, []string{"1", "4", "1"}, fields(p.body, "cycle-attempts"))
		require.Equal(t, "retry on 2026-04-01", field(t, p.body, "cycle-retry"))
		for st, text := range map[string]string{"PAID": "Paid", "CANCELLED": "Cancelled", "PENDING": "Pending"} {
			require.Contains(t, p.body, `<span class="st st-`+st+`" title="`+st+`">`+text+`</span>`)
		}
		var links []string
		for _, id := range ids {
			links = append(links, "/admin/c/"+b.merchant.ClientID+"/transactions/"+id)
		}
		require.Equal(t, links, hrefs(p.body, "cycle-link"))

		// A cycle's charge links back to its recurrence.
		p = c.get(links[0])
		require.Equal(t, http.StatusOK, p.status)
		require.Equal(t, detail, attr(t, p.body, "tx-recurrence"))
		require.NotContains(t, c.get("/admin/c/"+b.merchant.ClientID+"/transactions/"+b.charge(b.merchant, "plain", "1.00")).body,
			`data-testid="tx-recurrence"`)

		// The cancelled one, with no cycle yet.
		p = c.get("/admin/c/" + b.merchant.ClientID + "/recurrences/" + old.ID + "?lang=pt-BR")
		require.Equal(t, http.StatusOK, p.status)
		require.Equal(t, "pelo pagador", field(t, p.body, "rec-cancelled-by"))
		require.Contains(t, p.body, `data-testid="no-cycles"`)
		require.Equal(t, "—", field(t, p.body, "rec-next-due"), "a cancelled recurrence has no next cycle")

		// Unknown ids are the panel's 404.
		for _, path := range []string{"/admin/c/" + b.merchant.ClientID + "/recurrences/nope", "/admin/c/nope/recurrences/" + rec.ID,
			"/admin/recurrences?client=nope", "/admin/c/" + b.merchant.ClientID + "/recurrences/" + strings.Repeat("x", 65)} {
			p := c.get(path)
			require.Equal(t, http.StatusNotFound, p.status, path)
			require.Contains(t, p.body, "Página não encontrada.")
		}
	})
}

// TestRecurrencesScoping: an operator's list shows every client's
// recurrences, with whose each is, and filters by client; a merchant user
// sees only its own client's, and another client's recurrence or list is
// a 404 that shows nothing of it.
func TestRecurrencesScoping(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "Outra Loja"})
		require.NoError(t, err)
		now := b.clock.Now()
		own, _ := b.recurrence(b.merchant.ClientID, "sub-own", now.Add(-time.Minute), pix.RecurrenceCreated, "")
		theirs, theirIDs := b.recurrence(other.ClientID, "sub-theirs", now, pix.RecurrenceApproved, "", seedCycle{status: pix.StatusPending})

		ops := b.web()
		ops.login("ops@example.com", b.user("ops@example.com", pix.RoleOperator, ""))
		p := ops.get("/admin/recurrences")
		require.Equal(t, http.StatusOK, p.status)
		require.Equal(t, []string{theirs.ID, own.ID}, recRows(p.body))
		require.Equal(t, []string{"Outra Loja", "Loja Exemplo"}, fields(p.body, "rec-client"))
		require.Contains(t, p.body, `data-testid="filter-client"`)
		p = ops.get("/admin/recurrences?client=" + url.QueryEscape(other.ClientID))
		require.Equal(t, []string{theirs.ID}, recRows(p.body))
		require.NotContains(t, p.body, `data-testid="rec-client"`, "one client's list has no client column")
		require.Equal(t, http.StatusOK, ops.get("/admin/c/"+other.ClientID+"/recurrences/"+theirs.ID).status)

		m := b.web()
		m.login("loja@example.com", b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID))
		for _, path := range []string{"/admin/recurrences", "/admin/recurrences?client=" + url.QueryEscape(b.merchant.ClientID)} {
			p := m.get(path)
			require.Equal(t, http.StatusOK, p.status, path)
			require.Equal(t, []string{own.ID}, recRows(p.body), path)
			require.NotContains(t, p.body, `data-testid="filter-client"`, path)
			require.NotContains(t, p.body, "Outra Loja", path)
		}
		require.Equal(t, http.StatusOK, m.get("/admin/c/"+b.merchant.ClientID+"/recurrences/"+own.ID).status)
		for _, path := range []string{"/admin/recurrences?client=" + url.QueryEscape(other.ClientID),
			"/admin/c/" + other.ClientID + "/recurrences/" + theirs.ID,
			"/admin/c/" + b.merchant.ClientID + "/recurrences/" + theirs.ID,
			"/admin/c/" + other.ClientID + "/transactions/" + theirIDs[0]} {
			p := m.get(path)
			require.Equal(t, http.StatusNotFound, p.status, path)
			require.NotContains(t, p.body, "sub-theirs", path)
			require.NotContains(t, p.body, "Outra Loja", path)
		}
	})
}

// TestRecurrencesPaging: PageSize recurrences a page, newest first, by
// cursor; the next page keeps the filters; a bad cursor shows the first
// page with an alert.
func TestRecurrencesPaging(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		c := b.web()
		c.login("ops@example.com", b.user("ops@example.com", pix.RoleOperator, ""))
		now := b.clock.Now()
		n := admin.PageSize + 5
		var want []string
		for i := range n {
			// Two by two at the same millisecond: the id breaks the tie.
			r, _ := b.recurrence(b.merchant.ClientID, fmt.Sprintf("pg-%02d", i), now.Add(time.Duration(i/2)*time.Second), pix.RecurrenceApproved, "")
			want = append(want, r.ID)
		}
		// A recurrence of another status and one of another client are
		// filtered out.
		b.recurrence(b.merchant.ClientID, "pg-created", now, pix.RecurrenceCreated, "")
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "Outra Loja"})
		require.NoError(t, err)
		b.recurrence(other.ClientID, "pg-other", now, pix.RecurrenceApproved, "")

		base := "/admin/recurrences?client=" + url.QueryEscape(b.merchant.ClientID) + "&status=APPROVED"
		p := c.get(base)
		require.Equal(t, http.StatusOK, p.status)
		got := recRows(p.body)
		require.Len(t, got, admin.PageSize)
		next := attr(t, p.body, "next-page")
		require.Contains(t, next, "status=APPROVED")
		require.Contains(t, next, "client=")
		p = c.get(next)
		require.Equal(t, http.StatusOK, p.status)
		got = append(got, recRows(p.body)...)
		require.NotContains(t, p.body, `data-testid="next-page"`)
		first, err2 := url.Parse(attr(t, p.body, "first-page"))
		require.NoError(t, err2)
		require.Equal(t, "/admin/recurrences", first.Path)
		require.Equal(t, url.Values{"client": {b.merchant.ClientID}, "status": {"APPROVED"}}, first.Query())
		// Newest first: created_at descending, then id descending.
		require.Len(t, got, n)
		require.ElementsMatch(t, want, got)
		for i := 1; i < len(got); i++ {
			prev, cur := seeded(t, b, got[i-1]), seeded(t, b, got[i])
			require.True(t, prev.CreatedAt.After(cur.CreatedAt) || (prev.CreatedAt.Equal(cur.CreatedAt) && prev.ID > cur.ID), "row %d", i)
		}

		p = c.get(base + "&cursor=garbage")
		require.Equal(t, http.StatusOK, p.status)
		require.Contains(t, p.body, `data-testid="alert"`)
		require.Len(t, recRows(p.body), admin.PageSize)
	})
}

func seeded(t *testing.T, b *bundle, id string) pix.Recurrence {
	t.Helper()
	r, err := b.db.Recurrence(context.Background(), b.merchant.ClientID, id)
	require.NoError(t, err)
	return r
}

// TestBrowserRecurrence: in Chromium, a merchant user goes from the
// navigation to its recurrences, opens one, sees its cycles, and follows a
// cycle to its charge.
func TestBrowserRecurrence(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	pw := b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID)
	rec, ids := b.recurrence(b.merchant.ClientID, "sub-browser", b.clock.Now(), pix.RecurrenceApproved, "",
		seedCycle{status: pix.StatusPaid, attempts: 1}, seedCycle{status: pix.StatusPending})
	br := &browser{t: t, ctx: chromium.Launch(t, 90*time.Second), base: b.srv.URL}
	br.login("loja@example.com", pw)
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-recurrences]"))
	require.Equal(t, 1, br.count("[data-testid=rec-row]"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=rec-link]"))
	require.Equal(t, rec.ID, br.text("[data-testid=rec-id]"))
	require.Equal(t, "Autorizada", br.text("[data-testid=rec-status]"), "APPROVED in Portuguese")
	require.Equal(t, "Mensal", br.text("[data-testid=rec-frequency]"))
	require.Equal(t, 2, br.count("[data-testid=cycle-row]"))
	require.Equal(t, "31/03/2026", br.text("[data-testid=rec-next-due]"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=cycle-row]:first-child [data-testid=cycle-link]"))
	require.Equal(t, ids[0], br.text("[data-testid=tx-id]"))
	require.Equal(t, "Pago", br.text("[data-testid=tx-status]"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=tx-recurrence]"))
	require.Equal(t, rec.ID, br.text("[data-testid=rec-id]"))
}

// recRows returns the recurrence ids of a list page's rows, in order.
func recRows(body string) []string { return attrs(body, "rec-row", "data-id") }

// attrs returns the attribute name of every element with data-testid="id".
func attrs(body, id, name string) []string {
	var out []string
	for _, part := range strings.Split(body, `data-testid="`+id+`"`)[1:] {
		i := strings.Index(part, name+`="`)
		if i < 0 || strings.IndexByte(part, '>') < i {
			continue
		}
		v := part[i+len(name)+2:]
		out = append(out, v[:strings.IndexByte(v, '"')])
	}
	return out
}

// fields returns the text of every element with data-testid="id".
func fields(body, id string) []string {
	var out []string
	for _, part := range strings.Split(body, `data-testid="`+id+`"`)[1:] {
		start := strings.IndexByte(part, '>') + 1
		out = append(out, html.UnescapeString(strings.TrimSpace(part[start:start+strings.IndexByte(part[start:], '<')])))
	}
	return out
}

// hrefs returns the href of every link with data-testid="id".
func hrefs(body, id string) []string {
	parts := strings.Split(body, `data-testid="`+id+`"`)
	var out []string
	for _, part := range parts[:len(parts)-1] {
		h := part[strings.LastIndex(part, `href="`)+len(`href="`):]
		out = append(out, html.UnescapeString(h[:strings.IndexByte(h, '"')]))
	}
	return out
}
