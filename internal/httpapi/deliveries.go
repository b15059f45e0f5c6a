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
