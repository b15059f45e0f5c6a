package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/webhook"
)

// shownText is what a person reads on a page: its text without tags, the
// values of attributes (a badge's title, a filter's value) and the code
// blocks (ids, a posting's kind, an event's JSON payload), which are codes
// on purpose.
func shownText(body string) string {
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?s)<(script|style|pre|code)\b.*?</(script|style|pre|code)>`),
		regexp.MustCompile(`(?s)<[^>]*>`),
	} {
		body = re.ReplaceAllString(body, " ")
	}
	return body
}

// failWith records one failed delivery attempt per class on the events of
// transaction txID, each class the error of one attempt, as the dispatcher
// records a failure.
func (b *bundle) failWith(txID string, classes ...string) {
	b.t.Helper()
	ctx := context.Background()
	now := b.clock.Now()
	for i, class := range classes {
		require.NoError(b.t, b.db.Write(ctx, func(tx *store.Tx) error {
			claimed, err := tx.ClaimEvents(ctx, "test", now, now.Add(time.Minute), 100)
			if err != nil {
				return err
			}
			for _, e := range claimed {
				if e.TransactionID != txID {
					if err := tx.ReleaseEvent(ctx, "test", e.ID); err != nil {
						return err
					}
					continue
				}
				// Due again at once, so the next class is the next attempt's.
				a := pix.Attempt{ID: uuid.NewString(), EventID: e.ID, At: now.Add(time.Duration(i) * time.Millisecond),
					Latency: time.Millisecond, Error: class}
				if _, err := tx.FinishAttempt(ctx, "test", a, "pending", e.Attempts+1, now); err != nil {
					return err
				}
			}
			return nil
		}))
	}
}

// TestPortuguesePagesShowNoCodes: on the Portuguese panel, on both
// databases, the statuses of recurrences, their cycles and transactions,
// the ledger's accounts and the classes of failed webhook attempts read in
// Portuguese; the codes stay only where they are codes (a badge's title and
// style, a filter's value, the event's JSON).
func TestPortuguesePagesShowNoCodes(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		c := b.web()
		c.login("ops@example.com", b.user("ops@example.com", pix.RoleOperator, ""))
		now := b.clock.Now()
		var detail pix.Recurrence
		for i, st := range pix.RecurrenceStatuses() {
			var by pix.CancelledBy
			if st == pix.RecurrenceCancelled {
				by = pix.CancelledByPayer
			}
			var cycles []seedCycle
			if st == pix.RecurrenceApproved {
				cycles = []seedCycle{{status: pix.StatusPaid, attempts: 1}, {status: pix.StatusCancelled, attempts: 4}, {status: pix.StatusPending, attempts: 1}}
			}
			r, _ := b.recurrence(b.merchant.ClientID, fmt.Sprintf("sub-%d", i), now.Add(-time.Duration(i)*time.Minute), st, by, cycles...)
			if st == pix.RecurrenceApproved {
				detail = r
			}
		}
		id := b.charge(b.merchant, "pedido-pt", "10.00")
		status, body := b.api(b.merchant, "POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
		require.Equal(t, http.StatusOK, status, "%v", body)
		classes := []string{webhook.ClassDNS, webhook.ClassRefused, webhook.ClassReset, webhook.ClassTimeout, webhook.ClassTLS,
			webhook.ClassNotAllowed, webhook.ClassRedirect, webhook.ClassInvalidResponse, webhook.ClassConnection,
			webhook.ClassSecret, webhook.ClassSigning}
		b.failWith(id, classes...)

		codes := []string{"PENDING", "PAID", "CANCELLED", "REFUNDED", "REVERSED", "COMPLETED", "FAILED",
			"CREATED", "APPROVED", "REJECTED", "EXPIRED", "FINISHED", "available", "pending", "settlement", "fees", "suspense"}
		codes = append(codes, classes...)
		pages := map[string][]string{
			"/admin/recurrences?client=" + url.QueryEscape(b.merchant.ClientID): {"Aguardando o pagador", "Autorizada", "Recusada", "Expirada", "Cancelada", "Encerrada"},
			"/admin/c/" + b.merchant.ClientID + "/recurrences/" + detail.ID:     {"Autorizada", "Pago", "Cancelado", "Pendente"},
			"/admin/c/" + b.merchant.ClientID + "/transactions":                 {"Pago"},
			"/admin/c/" + b.merchant.ClientID + "/transactions/" + id:           {"Pago", "Disponível", "Liquidação", "conexão recusada", "tempo esgotado", "falha na resolução de DNS"},
		}
		for path, want := range pages {
			p := c.get(path + map[bool]string{true: "&", false: "?"}[strings.Contains(path, "?")] + "lang=pt-BR")
			require.Equal(t, http.StatusOK, p.status, "%s: %s", path, p.body)
			text := shownText(p.body)
			for _, code := range codes {
				require.NotRegexp(t, `(^|[^\pL_])`+regexp.QuoteMeta(code)+`($|[^\pL_])`, text, "%s shows %q untranslated", path, code)
			}
			for _, w := range want {
				require.Contains(t, text, w, path)
			}
		}
	})
}
