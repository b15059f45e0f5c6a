package httpapi

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strings"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/qr"
)

//go:embed web
var webFS embed.FS

var payTemplate = template.Must(template.ParseFS(webFS, "web/pay.html"))

// payCSP allows the page's own stylesheet and script, its inline QR image,
// and the script's reading of the charge's status from this origin.
const payCSP = "default-src 'none'; img-src data:; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// payTimeLayout is how the page shows times, in São Paulo time as the
// panel does: the payer is in Brazil, whatever the server's zone.
const payTimeLayout = "02/01/2006 15:04"

// payCharge returns the charge (cash-in) of the path's payment_id;
// ENotFound for anything that is not a charge. (An id that is not text was
// answered 400 by the router's checks before this handler.)
func (s *Server) payCharge(r *http.Request) (pix.Transaction, error) {
	return s.gw.PayerCharge(r.Context(), r.PathValue("payment_id"))
}

type payView struct {
	Found                                  bool
	PaymentID, Amount, Status, StatusLabel string
	StatusClass, QRCode, Image, ExpiresAt  string
	ConfirmedAt, EndToEndID                string
	// DueDate is the due date of a charge that has one (dd/mm/yyyy);
	// Amount is then what it costs today, or what was paid.
	DueDate string
	// Debited is a recurrence's cycle charge: no code to scan, the payer's
	// bank debits it on its due date.
	Debited bool
	Sandbox bool
}

// statusLabel is how the page names a charge's status to the payer.
func statusLabel(st pix.TxStatus) string {
	switch st {
	case pix.StatusPending:
		return "Aguardando pagamento"
	case pix.StatusPaid:
		return "Pago"
	case pix.StatusCancelled:
		return "Cancelada"
	case pix.StatusRefunded:
		return "Devolvida"
	case pix.StatusReversed:
		return "Estornada"
	}
	return ""
}

// payPage is the payer's page: QR image, copy-and-paste code, amount and
// status; in sandbox, a plain form that pays the charge.
func (s *Server) payPage(w http.ResponseWriter, r *http.Request) error {
	v := payView{Sandbox: s.sandbox}
	t, err := s.payCharge(r)
	status := http.StatusOK
	switch {
	case pix.ErrorCode(err) == pix.ENotFound:
		status = http.StatusNotFound
	case err != nil:
		return err
	default:
		v.Found, v.PaymentID, v.Amount, v.Status, v.QRCode = true, t.ID, t.Amount.Grouped(".", ","), string(t.Status), t.QRCode
		v.StatusLabel, v.StatusClass = statusLabel(t.Status), "other"
		switch t.Status {
		case pix.StatusPending, pix.StatusPaid, pix.StatusCancelled:
			v.StatusClass = strings.ToLower(string(t.Status)) // the CSS classes pending, paid, cancelled
		}
		v.ExpiresAt = t.ExpiresAt.In(s.loc).Format(payTimeLayout)
		if !t.ConfirmedAt.IsZero() {
			v.ConfirmedAt = t.ConfirmedAt.In(s.loc).Format(payTimeLayout)
		}
		v.EndToEndID = t.EndToEndID
		if t.Due != nil {
			v.DueDate = t.Due.Date.Start(s.loc).Format("02/01/2006")
			if a, ok := t.AmountDueOn(s.gw.TodayOf(r.Context(), t.ClientID)); ok {
				v.Amount = a.Grouped(".", ",")
			} else if t.PaidAmount > 0 {
				v.Amount = t.PaidAmount.Grouped(".", ",")
			}
		}
		v.Debited = t.RecurrenceID != "" && t.QRCode == ""
		if t.Status == pix.StatusPending && !v.Debited {
			if v.Image, err = qr.Base64PNG(t.QRCode); err != nil {
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
	h.Set("Cache-Control", "no-store") // coming back to the page shows the status of now
	w.WriteHeader(status)
	_, err = w.Write(buf.Bytes())
	return err
}

// payStatus is GET /pay/{payment_id}/status, which the page's script polls
// to update itself: {"status": "PENDING"|"PAID"|"CANCELLED"|…}. Like the
// page it needs no credentials and is not rate-limited per client, so it
// tells no more than the page does: the status alone.
func (s *Server) payStatus(w http.ResponseWriter, r *http.Request) error {
	t, err := s.payCharge(r)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, struct {
		Status pix.TxStatus `json:"status"`
	}{t.Status})
	return nil
}

// payPageSandboxPay is the sandbox form's target: pay, then show the page.
func (s *Server) payPageSandboxPay(w http.ResponseWriter, r *http.Request) error {
	t, err := s.payCharge(r)
	if err != nil {
		return s.payPage(w, r)
	}
	if _, err := s.gw.Sandbox().Pay(r.Context(), t); err != nil && pix.ErrorCode(err) == pix.EInternal {
		return err
	}
	http.Redirect(w, r, "/pay/"+t.ID, http.StatusSeeOther)
	return nil
}

// assets serves the pay page's CSS and JavaScript.
func (s *Server) assets() http.Handler {
	return http.StripPrefix("/assets/", http.FileServerFS(mustSub(webFS, "web")))
}
