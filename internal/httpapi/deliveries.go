package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
)

func (s *Server) deliveries(w http.ResponseWriter, r *http.Request) error {
	data, err := s.gw.Deliveries(r.Context(), client(r), r.URL.Query().Get("payment_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		StatusCode int                    `json:"statusCode"`
		Message    string                 `json:"message"`
		Data       []gateway.DeliveryView `json:"data"`
	}{http.StatusOK, "Webhook deliveries", data})
	return nil
}

func (s *Server) retryDelivery(w http.ResponseWriter, r *http.Request) error {
	if err := s.gw.RetryDelivery(r.Context(), client(r), r.PathValue("event_id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, struct {
		StatusCode int    `json:"statusCode"`
		Message    string `json:"message"`
	}{http.StatusAccepted, "Delivery scheduled"})
	return nil
}

// testWebhook sends the client a webhook.test event at the URL of the body
// and answers with the attempt, whatever the receiver answered.
func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		URL string `json:"url"`
	}
	if _, err := readJSON(r, &req); err != nil {
		return err
	}
	data, err := s.gw.TestWebhook(r.Context(), client(r), req.URL)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		StatusCode int                     `json:"statusCode"`
		Message    string                  `json:"message"`
		Data       gateway.TestAttemptView `json:"data"`
	}{http.StatusOK, "Webhook test sent", data})
	return nil
}
