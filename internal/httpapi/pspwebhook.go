package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/pixgate/pixgate/internal/cashin"
)

// The PSP's calls (docs/psp.md, The webhook): the PSP POSTs the Pix it received to
// <PIXGATE_PSP_WEBHOOK_URL>/pix, that is /psp/webhook/<secret>/pix. The
// secret in the path is the PSP's only authentication, so it is compared in
// constant time and never written to a log: the access log and metrics name
// the route by pspWebhookRoute.
const (
	// pspWebhookSubtree is the pattern under which every path is answered
	// by pspWebhook, so that the mux never tells a wrong secret from a
	// wrong sub-path.
	pspWebhookSubtree = "/psp/webhook/" //nolint:gosec // G101: a path prefix, not a credential
	// MaxPSPBodyBytes is the largest notification accepted from the PSP
	// (1 MiB): a PSP may report many Pix in one call.
	MaxPSPBodyBytes = 1 << 20
)

// pspWebhookRoutes are the paths under <secret>/ the PSP calls (Pix,
// recurrences, cycle charges), each with the route logged for it: the
// pattern with the secret left out.
var pspWebhookRoutes = map[string]string{
	"pix":  "POST /psp/webhook/{secret}/pix",
	"rec":  "POST /psp/webhook/{secret}/rec",
	"cobr": "POST /psp/webhook/{secret}/cobr",
}

var (
	errPSPTooLarge    = &httpError{http.StatusRequestEntityTooLarge, "Request body too large (limit 1 MiB)", "Request body too large (limit 1 MiB)"}
	errPSPUnavailable = &httpError{http.StatusServiceUnavailable, "Service unavailable", "Service unavailable"}
)

// pspNotification is the body the API Pix sends to a webhook: the Pix
// received, each with more fields than pixgate reads (valor, horario,
// devolucoes…), and at Efí the Pix sent, named by gnExtras.idEnvio (with
// tipo SOLICITACAO and a status). Only the names are read: the gateway
// reads every reported Pix back from the PSP before money moves.
type pspNotification struct {
	Pix *[]struct {
		EndToEndID *string `json:"endToEndId"`
		TxID       *string `json:"txid"`
		GnExtras   *struct {
			IDEnvio *string `json:"idEnvio"`
		} `json:"gnExtras"`
	} `json:"pix"`
}

// pspWebhookSecretSum returns what the path's secret is compared with: its
// SHA-256, so that the comparison takes as long whatever the length of
// the secret tried.
func pspWebhookSecretSum(secret string) [sha256.Size]byte { return sha256.Sum256([]byte(secret)) }

// pspWebhook answers every path under /psp/webhook/. A wrong secret, a
// path other than <secret>/pix (the bare <secret> included: the PSP calls
// no other path) and an unusable request all answer the same 404 body, so that a caller without
// the secret learns nothing about it; at the right path a method other
// than POST answers 405.
func (s *Server) pspWebhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, sub, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, pspWebhookSubtree), "/")
		sum := pspWebhookSecretSum(secret)
		known := subtle.ConstantTimeCompare(sum[:], s.pspSecret[:]) == 1
		route, ok := pspWebhookRoutes[sub]
		if !known || !ok {
			s.notePSPRoute(r, "")
			s.writeError(w, r, errRouteNotFound)
			return
		}
		s.notePSPRoute(r, route)
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			s.writeError(w, r, errMethodNotAllowed)
			return
		}
		var err error
		if sub == "pix" {
			err = s.pspReported(r)
		} else {
			err = s.pspRecReported(r, sub)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	})
}

// notePSPRoute sets the route the request's log line and metrics name: the
// pattern without the secret, or none for a 404.
func (s *Server) notePSPRoute(r *http.Request, route string) {
	if ph, ok := r.Context().Value(patternKey).(*patternHolder); ok {
		ph.pattern = route
	}
	r.Pattern = route
}

// pspReported reads the PSP's notification and hands the reported Pix to
// the gateway, which confirms each with the PSP before anything moves.
// Errors: 413, 400 for a body that is not a notification, 503 when the
// gateway cannot take it now (the PSP sends it again).
func (s *Server) pspReported(r *http.Request) error {
	body, err := readPSPBody(r)
	if err != nil {
		return err
	}
	reported, err := parsePSPNotification(body)
	if err != nil {
		return err
	}
	if len(reported) == 0 {
		return nil
	}
	if err := s.gw.Cashin().PSPReported(r.Context(), reported); err != nil {
		s.logger(r.Context()).ErrorContext(r.Context(), "psp webhook: reported pix not taken", "pix", len(reported), "error", err.Error())
		return errPSPUnavailable
	}
	return nil
}

// readPSPBody reads a PSP notification's body. Errors: 413, 400.
func readPSPBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxPSPBodyBytes {
		return nil, errPSPTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxPSPBodyBytes+1))
	if err != nil {
		return nil, invalid("", "")
	}
	if len(body) > MaxPSPBodyBytes {
		return nil, errPSPTooLarge
	}
	return body, nil
}

// parsePSPNotification decodes body leniently (PSPs add fields of their
// own): it must be a JSON object whose pix is an array of objects, each
// with an endToEndId of letters and digits or, for a Pix sent, a
// gnExtras.idEnvio of letters and digits. A txid that is not one is left
// out rather than refusing the Pix: the gateway learns the txid from the
// PSP anyway.
func parsePSPNotification(body []byte) ([]cashin.ReportedPix, error) {
	var n pspNotification
	if err := json.Unmarshal(body, &n); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, invalid(te.Field, "has the wrong type")
		}
		return nil, invalid("", "")
	}
	if n.Pix == nil {
		return nil, invalid("pix", "must be an array")
	}
	out := make([]cashin.ReportedPix, 0, len(*n.Pix))
	for _, p := range *n.Pix {
		if p.GnExtras != nil && p.GnExtras.IDEnvio != nil {
			// A Pix sent (Efí): its send is read back by its idEnvio; a
			// rejected one may have no end-to-end id.
			if !pspID(*p.GnExtras.IDEnvio, 35) {
				return nil, invalid("pix.gnExtras.idEnvio", "must be the send's idEnvio")
			}
			out = append(out, cashin.ReportedPix{SendID: *p.GnExtras.IDEnvio})
			continue
		}
		if p.EndToEndID == nil || !pspID(*p.EndToEndID, 64) {
			return nil, invalid("pix.endToEndId", "must be the Pix's end-to-end id")
		}
		rp := cashin.ReportedPix{EndToEndID: *p.EndToEndID}
		if p.TxID != nil && pspID(*p.TxID, 35) {
			rp.TxID = *p.TxID
		}
		out = append(out, rp)
	}
	return out, nil
}

// pspID reports whether v is 1 to limit letters and digits: the form of
// end-to-end ids and txids, which the gateway puts into the PSP's URLs.
func pspID(v string, limit int) bool {
	if v == "" || len(v) > limit {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
