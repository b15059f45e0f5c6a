package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
)

// clockRequest is the body of POST /api/v1/sandbox/clock.
type clockRequest struct {
	// Advance is how far to move the clock forward: a Go duration
	// ("36h", "90m", "1h30m").
	Advance *string `json:"advance"`
}

// clockResponse is the body of both sandbox clock endpoints.
type clockResponse struct {
	StatusCode int       `json:"statusCode"`
	Data       clockData `json:"data"`
}

type clockData struct {
	Now           string `json:"now"`
	OffsetSeconds int64  `json:"offset_seconds"`
}

func clockBody(v gateway.ClockView) clockResponse {
	return clockResponse{http.StatusOK, clockData{pix.FormatTime(v.Now), int64(v.Offset / time.Second)}}
}

// sandboxClock reads the caller's sandbox clock.
func (s *Server) sandboxClock(w http.ResponseWriter, r *http.Request) error {
	v, err := s.gw.Sandbox().Clock(r.Context(), client(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, clockBody(v))
	return nil
}

// sandboxAdvanceClock moves the caller's sandbox clock forward.
func (s *Server) sandboxAdvanceClock(w http.ResponseWriter, r *http.Request) error {
	var req clockRequest
	present, err := readOptionalJSON(r, &req)
	if err != nil {
		return err
	}
	if !present || req.Advance == nil {
		return invalid("advance", "is required")
	}
	raw := strings.TrimSpace(*req.Advance)
	d, err := time.ParseDuration(raw)
	if err != nil || raw != *req.Advance {
		return invalid("advance", `must be a Go duration such as "36h", "90m" or "1h30m"`)
	}
	v, err := s.gw.Sandbox().AdvanceClock(r.Context(), client(r), d)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, clockBody(v))
	return nil
}
