package admin

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/stream"
)

// Statement periods: a São Paulo day or month.
const (
	periodDay   = "day"
	periodMonth = "month"
)

// Years a statement's day or month may fall in: São Paulo's offset is a
// whole number of minutes (RFC 3339 can say it) and the window's end a
// four-digit year.
const (
	statementMinYear = 2000
	statementMaxYear = 9998
)

// statementPeriod is the window of a statement: [From, To) in São Paulo
// time, a day or a month.
type statementPeriod struct {
	Kind     string // periodDay or periodMonth
	Label    string // 2026-03-09 or 2026-03, as the form's inputs write it
	From, To time.Time
}

// statementResult is what the page shows of a chosen statement.
type statementResult struct {
	statementPeriod
	Format           string // CSV or JSON
	Opening, Closing pix.Amount
	Download         string // the download's URL
	File             string // the download's file name
}

type statementData struct {
	Clients  []pix.Client // an operator's choice; nil for merchant users
	ClientID string
	Day      string // the date input's value
	Month    string // the month input's value
	Format   string // gateway.StatementCSV or gateway.StatementJSON
	Result   *statementResult
}

// statementForm reads the statement page's query: the client (an operator
// picks any, or none yet; a merchant user has only its own: another is a
// 404 like every page of another client) and the form's values, the day
// and month defaulting to today's in São Paulo.
func (h *Handler) statementForm(r *http.Request) (*view, *statementData, error) {
	s, _ := sessionFrom(r)
	q := r.URL.Query()
	id := q.Get("client")
	if s.user.Role != pix.RoleOperator {
		if id == "" {
			id = s.user.ClientID
		}
		if id != s.user.ClientID {
			return nil, nil, errNotFound
		}
	}
	v := &view{Page: "statement"}
	v.session(s)
	if id != "" {
		c, err := h.gw.Client(r.Context(), id)
		if pix.ErrorCode(err) == pix.ENotFound {
			return nil, nil, errNotFound
		}
		if err != nil {
			return nil, nil, err
		}
		v.Client = &c
	}
	today, _ := h.today()
	d := &statementData{ClientID: id, Day: today.Format("2006-01-02"), Month: today.Format("2006-01"), Format: gateway.StatementCSV}
	if q.Has("day") {
		d.Day = strings.TrimSpace(q.Get("day"))
	}
	if q.Has("month") {
		d.Month = strings.TrimSpace(q.Get("month"))
	}
	if f := q.Get("format"); f != "" {
		d.Format = f
	}
	v.D = d
	return v, d, nil
}

// renderStatement renders the statement page, with the clients to choose
// from for an operator.
func (h *Handler) renderStatement(w http.ResponseWriter, r *http.Request, status int, v *view, d *statementData) error {
	if v.Operator() {
		cs, err := h.bo.Clients(r.Context())
		if err != nil {
			return err
		}
		d.Clients = cs
	}
	h.render(w, r, status, v)
	return nil
}

// period reads the statement's day or month from the query: period names
// which (the form's two buttons); a link names only one of day and month.
// It returns the message key of the mistake, if any.
func (h *Handler) period(q url.Values) (statementPeriod, string) {
	kind := q.Get("period")
	day, month := strings.TrimSpace(q.Get("day")), strings.TrimSpace(q.Get("month"))
	if kind == "" {
		switch {
		case day != "" && month == "":
			kind = periodDay
		case month != "" && day == "":
			kind = periodMonth
		}
	}
	var layout, value, bad string
	var months, days int
	switch kind {
	case periodDay:
		layout, value, bad, days = "2006-01-02", day, "statement.badday", 1
	case periodMonth:
		layout, value, bad, months = "2006-01", month, "statement.badmonth", 1
	default:
		return statementPeriod{}, "statement.noperiod"
	}
	t, err := time.ParseInLocation(layout, value, h.loc)
	if err != nil || t.Year() < statementMinYear || t.Year() > statementMaxYear {
		return statementPeriod{}, bad
	}
	y, m, d := t.Date()
	// Midnight by the calendar, not by adding 24 hours to a start.
	return statementPeriod{Kind: kind, Label: t.Format(layout),
		From: time.Date(y, m, d, 0, 0, 0, 0, h.loc), To: time.Date(y, m+time.Month(months), d+days, 0, 0, 0, 0, h.loc)}, ""
}

// statement validates the chosen client, period and format and reads the
// statement's balances. A mistake in the form is the message key alert,
// with a nil statement.
func (h *Handler) statement(r *http.Request, v *view, d *statementData) (st *gateway.Statement, p statementPeriod, alert string, err error) {
	if v.Client == nil {
		return nil, p, "statement.noclient", nil
	}
	p, alert = h.period(r.URL.Query())
	if alert != "" {
		return nil, p, alert, nil
	}
	if d.Format != gateway.StatementCSV && d.Format != gateway.StatementJSON {
		return nil, p, "statement.badformat", nil
	}
	st, err = h.gw.Statement(r.Context(), *v.Client, gateway.StatementQuery{
		From: p.From.Format(time.RFC3339), To: p.To.Format(time.RFC3339), Format: d.Format})
	if pix.ErrorCode(err) == pix.EInvalid {
		return nil, p, "statement.badperiod", nil
	}
	if err != nil {
		return nil, p, "", err
	}
	return st, p, "", nil
}

// statementPage shows the form and, once a day or month is chosen, the
// period's opening and closing balances and the link to download it.
func (h *Handler) statementPage(w http.ResponseWriter, r *http.Request) error {
	v, d, err := h.statementForm(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if !q.Has("period") && !q.Has("day") && !q.Has("month") && !q.Has("format") {
		return h.renderStatement(w, r, http.StatusOK, v, d)
	}
	st, p, alert, err := h.statement(r, v, d)
	if err != nil {
		return err
	}
	if alert != "" {
		v.Alert = alert
		return h.renderStatement(w, r, http.StatusBadRequest, v, d)
	}
	link := url.Values{"client": {v.Client.ID}, p.Kind: {p.Label}, "format": {d.Format}}
	d.Result = &statementResult{statementPeriod: p, Format: strings.ToUpper(d.Format), Opening: st.Opening, Closing: st.Closing,
		Download: "/admin/statement/download?" + link.Encode(), File: statementFile(v.Client.ID, p.Label, d.Format)}
	return h.renderStatement(w, r, http.StatusOK, v, d)
}

// statementDownload streams the statement as an attachment. A mistake in
// the query answers the page with its message (400) and nothing streamed.
func (h *Handler) statementDownload(w http.ResponseWriter, r *http.Request) error {
	v, d, err := h.statementForm(r)
	if err != nil {
		return err
	}
	st, p, alert, err := h.statement(r, v, d)
	if err != nil {
		return err
	}
	if alert != "" {
		v.Alert = alert
		return h.renderStatement(w, r, http.StatusBadRequest, v, d)
	}
	s, _ := sessionFrom(r)
	h.log.InfoContext(r.Context(), "admin statement download", "user_id", s.user.ID, "client_id", v.Client.ID, "period", p.Label, "format", st.Format)
	return h.attachment(w, r, statementFile(v.Client.ID, p.Label, st.Format), st.ContentType(), func(out io.Writer) error {
		return st.Write(r.Context(), out)
	})
}

// attachment sends what write writes as a download named file. An error
// before the first byte is an error page; after it, the response cannot
// be taken back, so the connection is aborted: the browser reports a
// failed download rather than saving a truncated file as if complete.
func (h *Handler) attachment(w http.ResponseWriter, r *http.Request, file, contentType string, write func(io.Writer) error) error {
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Content-Disposition", stream.Attachment(file))
	// A long download outlives the server's WriteTimeout while the browser reads.
	sw := stream.NewWriter(w)
	err := write(sw)
	if err == nil {
		return nil
	}
	if !sw.Started() {
		hd.Del("Content-Disposition")
		return err
	}
	h.log.ErrorContext(r.Context(), "admin download aborted", "route", r.Pattern, "file", file,
		"client_gone", r.Context().Err() != nil, "error", err.Error())
	panic(http.ErrAbortHandler)
}

// statementFile is a statement download's file name:
// pixgate-<client>-<YYYY-MM-DD or YYYY-MM>.<csv or json> (stream.Attachment
// makes it safe for the header).
func statementFile(clientID, label, format string) string {
	return "pixgate-" + clientID + "-" + label + "." + format
}
