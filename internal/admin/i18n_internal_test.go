package admin

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/webhook"
)

// TestCodesTranslated: every status, ledger account and class of a failed
// webhook attempt the panel can show has a Portuguese text of its own (an
// untranslated key would show as the key itself).
func TestCodesTranslated(t *testing.T) {
	t.Parallel()
	pt := lang{Code: langPT}
	var statuses []string
	for _, s := range []pix.TxStatus{pix.StatusPending, pix.StatusPaid, pix.StatusCancelled, pix.StatusRefunded, pix.StatusReversed} {
		statuses = append(statuses, string(s))
	}
	for _, s := range []pix.RefundStatus{pix.RefundPending, pix.RefundCompleted, pix.RefundFailed} {
		statuses = append(statuses, string(s))
	}
	for _, s := range pix.RecurrenceStatuses() {
		statuses = append(statuses, string(s))
	}
	statuses = append(statuses, "HELD", "RETURNING", "RETURNED", "pending", "delivered", "failed", "active", "disabled")
	for _, s := range statuses {
		_, ok := messages["status."+s]
		require.True(t, ok, "status %s has no text", s)
		require.NotEqual(t, s, pt.Badge(s).Text, "status %s", s)
		require.Equal(t, s, pt.Badge(s).Code)
	}
	for _, s := range pix.RecurrenceStatuses() {
		require.NotEqual(t, string(s), pt.RecurrenceStatus(s), "recurrence status %s", s)
		require.Equal(t, string(s), pt.RecurrenceBadge(s).Code)
	}
	require.Equal(t, "Cancelada", pt.RecurrenceStatus(pix.RecurrenceCancelled), "a recurrence is feminine")
	require.Equal(t, "Cancelado", pt.Status(pix.StatusCancelled), "a charge's status keeps its word")
	for _, typ := range pix.TxTypes() {
		require.NotEqual(t, "type."+string(typ), pt.Type(typ), "type %s has no text", typ)
	}
	kinds := append(ledger.Kinds[:], ledger.Suspense)
	kinds = append(append(kinds, ledger.MEDKinds[:]...), ledger.TransferKinds[:]...)
	for _, k := range kinds {
		_, ok := messages["account."+string(k)]
		require.True(t, ok, "account %s has no text", k)
		require.NotEqual(t, string(k), pt.Account(k))
	}
	for _, c := range []string{webhook.ClassDNS, webhook.ClassRefused, webhook.ClassReset, webhook.ClassTimeout,
		webhook.ClassTLS, webhook.ClassNotAllowed, webhook.ClassRedirect, webhook.ClassInvalidResponse,
		webhook.ClassConnection, webhook.ClassHTTP3xx, webhook.ClassHTTP4xx, webhook.ClassHTTP5xx,
		webhook.ClassSecret, webhook.ClassSigning} {
		require.NotEqual(t, c, pt.ErrorClass(c), "class %q", c)
		require.Equal(t, c, lang{Code: langEN}.ErrorClass(c))
	}
	require.Equal(t, "unexpected status 500", pt.ErrorClass("unexpected status 500"), "a text that is no class shows as it is")
}
