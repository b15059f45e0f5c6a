package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/recurrence"
)

// recurrenceCreated is the 201 body of a created recurrence.
type recurrenceCreated struct {
	StatusCode int `json:"statusCode"`
	recurrence.Created
}

// recurrenceResponse is the body of a read, a cancellation and a sandbox
// answer of a recurrence.
type recurrenceResponse struct {
	StatusCode int             `json:"statusCode"`
	Data       recurrence.View `json:"data"`
}

func (s *Server) createRecurrence(w http.ResponseWriter, r *http.Request) error {
	var req pix.RecurrenceRequest
	return idempotentCreate(w, r, &req, http.StatusCreated, func(in gateway.Idempotent[pix.RecurrenceRequest]) (any, bool, error) {
		resp, replayed, err := s.gw.Recurrences().Create(r.Context(), client(r), in)
		noteLog(r, "", resp.RecurrenceID)
		return recurrenceCreated{http.StatusCreated, resp}, replayed, err
	})
}

// listRecurrences answers GET /api/v1/gateway/recurrences: the calling
// client's recurrences, newest first, paged as history.
func (s *Server) listRecurrences(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	rows, next, err := s.gw.Recurrences().List(r.Context(), client(r), recurrence.ListQuery{
		Limit: q.Get("limit"), Cursor: q.Get("cursor"), Status: q.Get("status"),
	})
	if err != nil {
		return err
	}
	var nextCursor *string
	if next != "" {
		nextCursor = &next
	}
	writeJSON(w, http.StatusOK, struct {
		StatusCode int                  `json:"statusCode"`
		Message    string               `json:"message"`
		Data       []recurrence.Summary `json:"data"`
		NextCursor *string              `json:"next_cursor"`
	}{http.StatusOK, recurrence.MsgListed, rows, nextCursor})
	return nil
}

func (s *Server) getRecurrence(w http.ResponseWriter, r *http.Request) error {
	v, err := s.gw.Recurrences().Get(r.Context(), client(r), r.PathValue("recurrence_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, recurrenceResponse{http.StatusOK, v})
	return nil
}

func (s *Server) cancelRecurrence(w http.ResponseWriter, r *http.Request) error {
	v, err := s.gw.Recurrences().Cancel(r.Context(), client(r), r.PathValue("recurrence_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, recurrenceResponse{http.StatusOK, v})
	return nil
}

// sandboxRecurrence answers the sandbox's payer actions on a recurrence:
// approve, reject and cancel-by-payer.
func (s *Server) sandboxRecurrence(action string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		v, err := s.gw.Recurrences().Sandbox().Answer(r.Context(), client(r), r.PathValue("recurrence_id"), action)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, recurrenceResponse{http.StatusOK, v})
		return nil
	}
}

// nextCycleResponse is the body of the sandbox's next-cycle action.
type nextCycleResponse struct {
	StatusCode int        `json:"statusCode"`
	PaymentID  string     `json:"payment_id"`
	DueDate    pix.Date   `json:"due_date"`
	Amount     pix.Amount `json:"amount"`
}

func (s *Server) sandboxNextCycle(w http.ResponseWriter, r *http.Request) error {
	t, due, err := s.gw.Recurrences().Sandbox().NextCycle(r.Context(), client(r), r.PathValue("recurrence_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nextCycleResponse{http.StatusOK, t.ID, due, t.Amount})
	return nil
}

// sandboxFail makes the current debit of the caller's cycle charge fail.
func (s *Server) sandboxFail(w http.ResponseWriter, r *http.Request) error {
	t, err := s.gw.Recurrences().Sandbox().FailCharge(r.Context(), client(r), r.PathValue("payment_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, transactionResponse{http.StatusOK, "Debit failed", gateway.View(t, s.gw.ClientToday(client(r)))})
	return nil
}

// maxReportedIDs bounds the recurrences or cycle charges one PSP
// notification may name, each read back from the PSP.
const maxReportedIDs = 1000

// pspRecNotification is a webhookrec (recs, by idRec) or webhookcobr
// (cobsr, by txid) notification; only the names are read, every item is
// read back from the PSP before anything moves.
type pspRecNotification struct {
	Recs *[]struct {
		IDRec *string `json:"idRec"`
	} `json:"recs"`
	CobsR *[]struct {
		TxID *string `json:"txid"`
	} `json:"cobsr"`
}

// pspRecReported hands the recurrences (sub "rec") or cycle charges (sub
// "cobr") a PSP notification names to the gateway. Errors as pspReported.
func (s *Server) pspRecReported(r *http.Request, sub string) error {
	body, err := readPSPBody(r)
	if err != nil {
		return err
	}
	var n pspRecNotification
	if err := json.Unmarshal(body, &n); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return invalid(te.Field, "has the wrong type")
		}
		return invalid("", "")
	}
	var ids []string
	switch {
	case sub == "rec" && n.Recs != nil:
		for _, it := range *n.Recs {
			if it.IDRec == nil || !pspID(*it.IDRec, 35) {
				return invalid("recs.idRec", "must be the recurrence's idRec")
			}
			ids = append(ids, *it.IDRec)
		}
	case sub == "cobr" && n.CobsR != nil:
		for _, it := range *n.CobsR {
			if it.TxID == nil || !pspID(*it.TxID, 35) {
				return invalid("cobsr.txid", "must be the charge's txid")
			}
			ids = append(ids, *it.TxID)
		}
	case sub == "rec":
		return invalid("recs", "must be an array")
	default:
		return invalid("cobsr", "must be an array")
	}
	if len(ids) > maxReportedIDs {
		return invalid("", "")
	}
	if sub == "rec" {
		err = s.gw.Recurrences().Reported(r.Context(), ids)
	} else {
		err = s.gw.Recurrences().CyclesReported(r.Context(), ids)
	}
	if err != nil {
		s.logger(r.Context()).ErrorContext(r.Context(), "psp webhook: reported recurrences not taken", "kind", sub, "items", len(ids), "error", err.Error())
		return errPSPUnavailable
	}
	return nil
}
