package httpapi

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"net/http"
	"strings"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

//go:embed web
var webFS embed.FS

var payTemplate = template.Must(template.ParseFS(webFS, "web/pay.html"))

const payCSP = "default-src 'none'; img-src data:; style-src 'self'; script-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

type payView struct {
	Found                                  bool
	PaymentID, Amount, Status, StatusLabel string
	StatusClass, QRCode, Image, ExpiresAt  string
	ConfirmedAt                            string
	Sandbox                                bool
}

var statusLabels = map[string]string{
	gateway.StatusPending: "Aguardando pagamento", gateway.StatusPaid: "Pago",
	gateway.StatusCancelled: "Cancelada", gateway.StatusRefunded: "Devolvida", gateway.StatusReversed: "Estornada",
}

// payPage is the payer's page: QR image, copy-and-paste code, amount and
// status; in sandbox, a plain form that pays the charge.
func (s *Server) payPage(w http.ResponseWriter, r *http.Request) error {
	v := payView{Sandbox: s.sandbox}
	t, err := s.gw.DB.TransactionByID(r.Context(), r.PathValue("payment_id"))
	status := http.StatusOK
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && t.Type != store.TypeCashin):
		status = http.StatusNotFound
	case err != nil:
		return err
	default:
		v.Found, v.PaymentID, v.Amount, v.Status, v.QRCode = true, t.ID, t.Amount.Grouped(".", ","), t.Status, t.QRCode
		v.StatusLabel, v.StatusClass = statusLabels[t.Status], "other"
		switch t.Status {
		case gateway.StatusPending, gateway.StatusPaid, gateway.StatusCancelled:
			v.StatusClass = strings.ToLower(t.Status) // the CSS classes pending, paid, cancelled
		}
		v.ExpiresAt = t.ExpiresAt.UTC().Format("02/01/2006 15:04")
		if !t.ConfirmedAt.IsZero() {
			v.ConfirmedAt = t.ConfirmedAt.UTC().Format("02/01/2006 15:04")
		}
		if t.Status == gateway.StatusPending {
			if v.Image, err = s.gw.QR.Base64PNG(t.QRCode); err != nil {
				return err
			}
		}
	}
	var buf bytes.Buffer
	if err := payTemplate.Execute(&buf, v); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", payCSP)
	w.WriteHeader(status)
	_, err = w.Write(buf.Bytes())
	return err
}

// payPageSandboxPay is the sandbox form's target: pay, then show the page.
func (s *Server) payPageSandboxPay(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("payment_id")
	t, err := s.gw.DB.TransactionByID(r.Context(), id)
	if err != nil || t.Type != store.TypeCashin {
		return s.payPage(w, r)
	}
	if _, err := s.gw.ReceivePayment(r.Context(), s.psp.PaymentFor(t.TxID, t.Amount, s.gw.Now())); err != nil && pix.ErrorCode(err) == pix.EInternal {
		return err
	}
	http.Redirect(w, r, "/pay/"+t.ID, http.StatusSeeOther)
	return nil
}

// assets serves the pay page's CSS and JavaScript.
func (s *Server) assets() http.Handler {
	return http.StripPrefix("/assets/", http.FileServerFS(mustSub(webFS, "web")))
}
