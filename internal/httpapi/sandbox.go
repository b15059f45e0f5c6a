package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
)

// sandboxPayRequest is the optional body of the sandbox's pay action.
type sandboxPayRequest struct {
	// Date is the São Paulo date the payer pays on (YYYY-MM-DD); absent,
	// today. A charge with a due date is paid for what is due that day.
	Date *string `json:"date"`
}

// sandboxPay pays the caller's charge as if a payer had paid its BR Code,
// today or on the day the optional body names.
func (s *Server) sandboxPay(w http.ResponseWriter, r *http.Request) error {
	var req sandboxPayRequest
	if _, err := readOptionalJSON(r, &req); err != nil {
		return err
	}
	var day pix.Date
	if req.Date != nil {
		d, err := pix.ParseDate(*req.Date)
		if err != nil {
			return invalid("date", pix.ErrDate.Error())
		}
		day = d
	}
	t, err := s.gw.Charge(r.Context(), client(r), r.PathValue("payment_id"))
	if err != nil {
		return err
	}
	t, err = s.gw.Sandbox().PayOn(r.Context(), t, day)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, transactionResponse{http.StatusOK, "Charge paid", gateway.View(t, s.gw.ClientToday(client(r)))})
	return nil
}

// sandboxExpire cancels the caller's pending charge.
func (s *Server) sandboxExpire(w http.ResponseWriter, r *http.Request) error {
	t, err := s.gw.Sandbox().ExpireCharge(r.Context(), client(r), r.PathValue("payment_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, transactionResponse{http.StatusOK, "Charge cancelled", gateway.View(t, s.gw.ClientToday(client(r)))})
	return nil
}
