package httpapi

import (
	stdjson "encoding/json"
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
)

// MaxBatchBodyBytes is the largest body of a batch of payouts (1 MiB): a
// thousand payouts do not fit in MaxBodyBytes, which every other endpoint
// keeps.
const MaxBatchBodyBytes = 1 << 20

var errBatchTooLarge = &httpError{http.StatusRequestEntityTooLarge, "Request body too large (limit 1 MiB)", "Request body too large (limit 1 MiB)"}

// batchEnvelope is a batch's body with its items left raw: each is read on
// its own, as its single request would be, so that one bad item rejects
// only itself.
type batchEnvelope struct {
	ExternalID  string               `json:"external_id"`
	CallbackURL string               `json:"callbackUrl"`
	Items       []stdjson.RawMessage `json:"items"`
}

// batchItemJSON is one item of a batch's answer.
type batchItemJSON struct {
	Index         int            `json:"index"`
	ExternalID    *string        `json:"external_id"`
	TransactionID *string        `json:"transaction_id"`
	Status        pix.TxStatus   `json:"status"`
	Error         *itemErrorJSON `json:"error"`
}

// itemErrorJSON is a rejected item's error: what its single request would
// have answered.
type itemErrorJSON struct {
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
}

// batchJSON is a batch's data.
type batchJSON struct {
	BatchID    string                `json:"batch_id"`
	ExternalID string                `json:"external_id"`
	Total      int                   `json:"total"`
	Accepted   int                   `json:"accepted"`
	Rejected   int                   `json:"rejected"`
	Counts     *map[pix.TxStatus]int `json:"counts,omitempty"`
	Items      []batchItemJSON       `json:"items"`
}

type batchResponse struct {
	StatusCode int       `json:"statusCode"`
	Data       batchJSON `json:"data"`
}

// createBatch accepts a batch of payouts (docs/payouts.md): 202 with what
// became of each item.
func (s *Server) createBatch(w http.ResponseWriter, r *http.Request) error {
	var env batchEnvelope
	body, err := readJSONUpTo(r, &env, MaxBatchBodyBytes, errBatchTooLarge)
	if err != nil {
		return err
	}
	req := gateway.BatchRequest{ExternalID: env.ExternalID, CallbackURL: env.CallbackURL, Items: make([]gateway.BatchItemInput, len(env.Items))}
	for i, raw := range env.Items {
		var item gateway.PayoutRequest
		if err := decodeStrict(raw, &item); err != nil {
			req.Items[i].Err = err
			continue
		}
		req.Items[i].In = gateway.Keyed(&item, "", raw)
	}
	v, replayed, err := s.gw.Payouts().CreateBatch(r.Context(), client(r), gateway.Keyed(&req, "", body))
	if err != nil {
		return err
	}
	noteLog(r, "", v.BatchID)
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusAccepted, batchResponse{http.StatusAccepted, batchData(v)})
	return nil
}

// getBatch answers one of the caller's batches with its items as they now read.
func (s *Server) getBatch(w http.ResponseWriter, r *http.Request) error {
	v, err := s.gw.Payouts().Batch(r.Context(), client(r), r.PathValue("batch_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, batchResponse{http.StatusOK, batchData(v)})
	return nil
}

// batchData is v as the API shows it, each rejected item's error rendered
// as its single request's body would be.
func batchData(v gateway.BatchView) batchJSON {
	out := batchJSON{BatchID: v.BatchID, ExternalID: v.ExternalID, Total: v.Total, Accepted: v.Accepted, Rejected: v.Rejected,
		Counts: v.Counts, Items: make([]batchItemJSON, len(v.Items))}
	for i, it := range v.Items {
		out.Items[i] = batchItemJSON{Index: it.Index, ExternalID: it.ExternalID, TransactionID: it.TransactionID, Status: it.Status}
		if it.Err != nil {
			out.Items[i].Error = itemError(it.Err)
		}
	}
	return out
}

// itemError is the status and message a gateway endpoint answers for e.
func itemError(e *pix.Error) *itemErrorJSON {
	spec, ok := errorTable[e.Code]
	if !ok {
		spec = errorTable[pix.EInternal]
	}
	msg := spec.gateway
	if e.Message != "" && spec.show {
		msg = e.Message
	}
	return &itemErrorJSON{StatusCode: spec.status, Message: msg}
}

// cancelPayout cancels the caller's scheduled payout before its day: 200
// with the payout as lookup shows it.
func (s *Server) cancelPayout(w http.ResponseWriter, r *http.Request) error {
	t, err := s.gw.Payouts().Cancel(r.Context(), client(r), r.PathValue("transaction_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, transactionResponse{http.StatusOK, "Payout cancelled", gateway.View(t, s.gw.ClientToday(client(r)))})
	return nil
}

// sandboxRunSchedule starts the caller's scheduled payout now, as if its
// day had begun.
func (s *Server) sandboxRunSchedule(w http.ResponseWriter, r *http.Request) error {
	t, err := s.gw.Sandbox().RunSchedule(r.Context(), client(r), r.PathValue("transaction_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, transactionResponse{http.StatusOK, "Scheduled payout started", gateway.View(t, s.gw.ClientToday(client(r)))})
	return nil
}
