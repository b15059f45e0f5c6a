package admin

import (
	"io/fs"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
)

// TestDeadlineOf: an OPEN dispute is marked from 24 h before its
// respond_by up to respond_by itself (a defense is still taken then), and
// overdue after it; a CLOSED one never.
func TestDeadlineOf(t *testing.T) {
	t.Parallel()
	by := time.Date(2026, time.March, 10, 15, 0, 0, 0, time.UTC)
	open := pix.Dispute{Status: pix.DisputeOpen, RespondBy: by}
	for _, c := range []struct {
		now  time.Time
		want string
	}{
		{by.Add(-72 * time.Hour), ""},
		{by.Add(-DueSoon - time.Millisecond), ""},
		{by.Add(-DueSoon), deadlineSoon},
		{by.Add(-23 * time.Hour), deadlineSoon},
		{by, deadlineSoon},
		{by.Add(time.Millisecond), deadlineOverdue},
	} {
		require.Equal(t, c.want, deadlineOf(open, c.now), "%s before respond_by", by.Sub(c.now))
	}
	closed := open
	closed.Status = pix.DisputeClosed
	require.Empty(t, deadlineOf(closed, by.Add(-time.Hour)))
	require.Empty(t, deadlineOf(closed, by.Add(time.Hour)))
}

// TestDisputeTextsTranslated: every reason, outcome and status a dispute
// can show, and every key the disputes page names, has a text in both
// languages (an unknown key would show as the key itself).
func TestDisputeTextsTranslated(t *testing.T) {
	t.Parallel()
	keys := []string{"dispstatus." + string(pix.DisputeOpen), "dispstatus." + string(pix.DisputeClosed),
		"disp.outcome." + string(pix.OutcomeReleased), "disp.outcome." + string(pix.OutcomeReturned)}
	for _, r := range []pix.DisputeReason{pix.ReasonFraud, pix.ReasonOperationalFailure, pix.ReasonPixAutomatico} {
		keys = append(keys, "disp.reason."+string(r))
	}
	page, err := fs.ReadFile(webFS, "web/disputes.html")
	require.NoError(t, err)
	layout, err := fs.ReadFile(webFS, "web/layout.html")
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`\.T "([^"]+)"`).FindAllStringSubmatch(string(page)+string(layout), -1) {
		keys = append(keys, m[1])
	}
	require.Contains(t, keys, "disp.soon")
	require.Contains(t, keys, "nav.disputes")
	for _, k := range keys {
		m, ok := messages[k]
		require.True(t, ok, "%s has no text", k)
		require.NotEmpty(t, m[0], "%s in Portuguese", k)
		require.NotEmpty(t, m[1], "%s in English", k)
	}
	pt := lang{Code: langPT}
	require.Equal(t, "Aberta", pt.DisputeStatus(pix.DisputeOpen), "a contestação is feminine")
	require.Equal(t, pix.DisputeClosed, pix.DisputeStatus(pt.DisputeBadge(pix.DisputeClosed).Code))
}
