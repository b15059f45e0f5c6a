package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/account"
	"github.com/pixgate/pixgate/internal/gateway"
)

// createTransfer moves money between the caller and its parent or one of
// its sub-accounts (POST /api/v1/wallet/transfers): wallet-shaped errors,
// idempotent as payouts are.
func (s *Server) createTransfer(w http.ResponseWriter, r *http.Request) error {
	var req account.TransferRequest
	return idempotentCreate(w, r, &req, http.StatusOK, func(in gateway.Idempotent[account.TransferRequest]) (any, bool, error) {
		v, replayed, err := s.gw.Accounts().Transfer(r.Context(), client(r), in)
		noteLog(r, "", v.TransferID)
		return accountResponse[account.TransferView]{http.StatusOK, v}, replayed, err
	})
}
