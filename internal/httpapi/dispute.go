package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/pix"
)

// disputeResponse is the body of every answer that shows one dispute.
type disputeResponse struct {
	StatusCode int             `json:"statusCode"`
	Message    string          `json:"message,omitempty"`
	Data       pix.DisputeView `json:"data"`
}

// disputePage is the body of the disputes' list.
type disputePage struct {
	StatusCode int               `json:"statusCode"`
	Message    string            `json:"message"`
	Data       []pix.DisputeView `json:"data"`
	NextCursor *string           `json:"next_cursor"`
}

func (s *Server) getDispute(w http.ResponseWriter, r *http.Request) error {
	d, err := s.gw.Cashin().Dispute(r.Context(), client(r), r.PathValue("dispute_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, disputeResponse{StatusCode: http.StatusOK, Data: d.View()})
	return nil
}

func (s *Server) listDisputes(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	rows, next, err := s.gw.Cashin().Disputes(r.Context(), client(r), cashin.DisputeQuery{
		Status: q.Get("status"), PaymentID: q.Get("payment_id"), Limit: q.Get("limit"), Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	page := disputePage{StatusCode: http.StatusOK, Message: cashin.MsgDisputesOK, Data: make([]pix.DisputeView, len(rows))}
	for i, d := range rows {
		page.Data[i] = d.View()
	}
	if next != "" {
		page.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// defenseRequest is the body of a dispute's defense, read strictly and
// then checked by pix.ParseDefense.
type defenseRequest struct {
	Accept        json.RawMessage `json:"accept"`
	Justification json.RawMessage `json:"justification"`
}

func (s *Server) defendDispute(w http.ResponseWriter, r *http.Request) error {
	var req defenseRequest
	body, err := readJSON(r, &req)
	if err != nil {
		return err
	}
	accept, justification, err := pix.ParseDefense(body)
	if err != nil {
		return err
	}
	d, err := s.gw.Cashin().Defend(r.Context(), client(r), r.PathValue("dispute_id"), accept, justification)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, disputeResponse{StatusCode: http.StatusOK, Message: cashin.MsgDefenseSent, Data: d.View()})
	return nil
}

// The sandbox's MED actions' bodies, read strictly, then by pix's parsers.
type (
	sandboxDisputeRequest struct {
		Amount json.RawMessage `json:"amount"`
		Reason json.RawMessage `json:"reason"`
	}
	sandboxResolveRequest struct {
		Outcome json.RawMessage `json:"outcome"`
		Amount  json.RawMessage `json:"amount"`
	}
	sandboxReturnRequest struct {
		Amount json.RawMessage `json:"amount"`
		Nature json.RawMessage `json:"natureza"`
	}
)

func (s *Server) sandboxDispute(w http.ResponseWriter, r *http.Request) error {
	body, err := readOptionalBody(r, &sandboxDisputeRequest{})
	if err != nil {
		return err
	}
	req, err := pix.ParseSandboxDispute(body)
	if err != nil {
		return err
	}
	d, err := s.gw.Sandbox().Dispute(r.Context(), client(r), r.PathValue("payment_id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, disputeResponse{StatusCode: http.StatusOK, Message: "Dispute opened.", Data: d.View()})
	return nil
}

func (s *Server) sandboxResolveDispute(w http.ResponseWriter, r *http.Request) error {
	var req sandboxResolveRequest
	body, err := readJSON(r, &req)
	if err != nil {
		return err
	}
	res, err := pix.ParseSandboxResolve(body)
	if err != nil {
		return err
	}
	d, err := s.gw.Sandbox().ResolveDispute(r.Context(), client(r), r.PathValue("dispute_id"), res)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, disputeResponse{StatusCode: http.StatusOK, Message: "Dispute closed.", Data: d.View()})
	return nil
}

func (s *Server) sandboxMedReturn(w http.ResponseWriter, r *http.Request) error {
	body, err := readOptionalBody(r, &sandboxReturnRequest{})
	if err != nil {
		return err
	}
	req, err := pix.ParseSandboxReturn(body)
	if err != nil {
		return err
	}
	d, err := s.gw.Sandbox().MedReturn(r.Context(), client(r), r.PathValue("payment_id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, disputeResponse{StatusCode: http.StatusOK, Message: "MED return recorded.", Data: d.View()})
	return nil
}
