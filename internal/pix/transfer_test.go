package pix

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSendStepAllowed(t *testing.T) {
	t.Parallel()
	states := []string{"", SendToSend, SendUnknown, SendSent, SendDone}
	allowed := map[[2]string]bool{
		{SendToSend, SendUnknown}: true, {SendToSend, SendSent}: true, {SendToSend, SendDone}: true,
		{SendUnknown, SendToSend}: true, {SendUnknown, SendSent}: true, {SendUnknown, SendDone}: true,
		{SendSent, SendDone}: true,
	}
	for _, from := range states {
		for _, to := range states {
			want := from == to || allowed[[2]string{from, to}]
			require.Equal(t, want, SendStepAllowed(from, to), "%q → %q", from, to)
		}
	}
	// The two that would lose money: a resend after the PSP accepted, and
	// a final transfer taken up again.
	require.False(t, SendStepAllowed(SendSent, SendToSend))
	require.False(t, SendStepAllowed(SendDone, SendSent))
}

func TestTransferKindNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, "payout", TransferPayout.String())
	require.Equal(t, "refund", TransferRefund.String())
	require.Equal(t, "unmatched_receipt", TransferReturn.String())
}
