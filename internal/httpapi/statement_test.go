package httpapi_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/sqlite"
	"github.com/pixgate/pixgate/internal/testkit"
)

const statementPath = "/api/v1/wallet/statement"

// stmtMovement is one movement of a JSON statement.
type stmtMovement struct {
	At            string `json:"at"`
	TransactionID string `json:"transaction_id"`
	Type          string `json:"type"`
	Description   string `json:"description"`
	AmountCents   int64  `json:"amount_cents"`
	BalanceCents  int64  `json:"balance_cents"`
}

// stmtBody is the JSON statement, decoded strictly.
type stmtBody struct {
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
	Data       struct {
		From      string         `json:"from"`
		To        string         `json:"to"`
		Opening   int64          `json:"opening_balance_cents"`
		Closing   int64          `json:"closing_balance_cents"`
		Movements []stmtMovement `json:"movements"`
	} `json:"data"`
}

// stmtQuery is the query of a statement from from to to (RFC 3339 with
// nanoseconds) in format ("" for the default).
func stmtQuery(from, to time.Time, format string) string {
	q := url.Values{"from": {from.UTC().Format(time.RFC3339Nano)}, "to": {to.UTC().Format(time.RFC3339Nano)}}
	if format != "" {
		q.Set("format", format)
	}
	return "?" + q.Encode()
}

// statement GETs a JSON statement, checks its shape and invariants (exact
// field names, opening + Σ amounts = closing, each balance the previous
// plus its amount) and returns it decoded.
func (b *bundle) statement(from, to time.Time, cred ...backoffice.Credentials) stmtBody {
	b.t.Helper()
	t := b.t
	r := b.do("GET", statementPath+stmtQuery(from, to, ""), nil, cred...)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	require.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
	require.Equal(t, "no-store", r.header.Get("Cache-Control"))
	require.Empty(t, r.header.Get("Content-Disposition"))

	// The exact field names, at every level.
	require.ElementsMatch(t, []string{"statusCode", "message", "data"}, keys(r.json))
	data := r.json["data"].(map[string]any)
	require.ElementsMatch(t, []string{"from", "to", "opening_balance_cents", "closing_balance_cents", "movements"}, keys(data))
	for _, m := range data["movements"].([]any) {
		require.ElementsMatch(t, gateway.CSVHeader, keys(m.(map[string]any)))
	}

	var body stmtBody
	d := json.NewDecoder(bytes.NewReader(r.body))
	d.DisallowUnknownFields()
	require.NoError(t, d.Decode(&body))
	require.Equal(t, 200, body.StatusCode)
	require.Equal(t, gateway.MsgStatementOK, body.Message)
	require.Equal(t, pix.FormatTime(from), body.Data.From)
	require.Equal(t, pix.FormatTime(to), body.Data.To)
	bal := body.Data.Opening
	var prev time.Time
	for i, m := range body.Data.Movements {
		bal += m.AmountCents
		require.Equal(t, bal, m.BalanceCents, "movement %d: the previous balance plus its amount", i)
		at, err := time.Parse(pix.TimeFormat, m.At)
		require.NoError(t, err)
		require.False(t, at.Before(prev), "movement %d: in order", i)
		require.False(t, at.Before(from.Truncate(time.Millisecond)), "movement %d at %s: not before from", i, m.At)
		require.True(t, at.Before(to), "movement %d at %s: before to", i, m.At)
		prev = at
		require.Regexp(t, uuidV4, m.TransactionID)
		require.NotEmpty(t, m.Description)
	}
	require.Equal(t, bal, body.Data.Closing, "opening + Σ amounts = closing")
	return body
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// line is a movement without its time and description.
type line struct {
	id, typ string
	amount  int64
}

func lines(ms []stmtMovement) []line {
	out := make([]line, len(ms))
	for i, m := range ms {
		out[i] = line{m.TransactionID, m.Type, m.AmountCents}
	}
	return out
}

// stmtActivity gives the bundle's client a paid charge and three payouts
// (one completes, one fails, one is returned), each a second apart on the
// clock, and settles them. Fees: 1.5% + R$ 0.10 on both.
func stmtActivity(b *bundle) (charge, ok, fail, rev string) {
	b.t.Helper()
	charge = b.createCharge(fmt.Sprint("st-", time.Now().UnixNano()), "100.00").json["payment_id"].(string)
	require.Equal(b.t, http.StatusOK, b.do("POST", "/api/v1/sandbox/charges/"+charge+"/pay", nil).status)
	b.clock.Advance(time.Second)
	po := func(amount, keyType, key string) string {
		r := b.do("POST", "/api/v1/gateway/pix-payment", payout(amount, keyType, key))
		require.Equal(b.t, http.StatusOK, r.status, string(r.body))
		b.clock.Advance(time.Second)
		return r.json["transaction_id"].(string)
	}
	ok = po("10", "CPF", "52998224725")
	fail = po("10", "EMAIL", "someone@fail.sandbox")
	rev = po("20", "EMAIL", "someone@reverse.sandbox")
	b.settle()
	return charge, ok, fail, rev
}

var stmtFees = options{fee: pix.FeeRule{PercentBP: 150, Fixed: 10}}

// TestStatementJSONAndCSV: every change of the available balance, in order,
// principal and fee apart, in JSON and in CSV (RFC 4180, the same rows).
func TestStatementJSONAndCSV(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, stmtFees)
		from := b.clock.Now().Add(-time.Minute)
		charge, ok, fail, rev := stmtActivity(b)
		to := b.clock.Now().Add(time.Minute)

		st := b.statement(from, to)
		require.Zero(t, st.Data.Opening, "a new client starts at zero")
		got := lines(st.Data.Movements)
		require.Len(t, got, 11)
		require.Equal(t, []line{
			{charge, "charge", 10000}, {charge, "charge_fee", -160}, // 1.5% of 10000 + 10
			{ok, "payout", -1000}, {ok, "payout_fee", -25}, // 1.5% of 1000 + 10
			{fail, "payout", -1000}, {fail, "payout_fee", -25},
			{rev, "payout", -2000}, {rev, "payout_fee", -40},
		}, got[:8], "in the order they were applied")
		require.ElementsMatch(t, []line{
			{fail, "payout_failed", 1000}, {fail, "payout_fee_returned", 25}, {rev, "payout_returned", 2000},
		}, got[8:], "settlement gives back a failed payout with its fee, and a returned one without")
		avail, _ := b.balance()
		require.Equal(t, json.Number(strconv.FormatInt(st.Data.Closing, 10)), avail, "the closing balance is the balance")
		require.Equal(t, int64(10000-160-1025-1025-2040+1025+2000), st.Data.Closing)
		require.Equal(t, "Pix charge received", st.Data.Movements[0].Description)

		// The same statement as CSV.
		r := b.do("GET", statementPath+stmtQuery(from, to, "csv"), nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, "text/csv; charset=utf-8", r.header.Get("Content-Type"))
		require.Equal(t, "no-store", r.header.Get("Cache-Control"))
		name := "pixgate-statement-" + from.UTC().Format("20060102T150405.000Z") + "-" + to.UTC().Format("20060102T150405.000Z") + ".csv"
		require.Equal(t, `attachment; filename="`+name+`"`, r.header.Get("Content-Disposition"))
		require.True(t, bytes.HasSuffix(r.body, []byte("\r\n")))
		require.Equal(t, bytes.Count(r.body, []byte("\n")), bytes.Count(r.body, []byte("\r\n")), "CRLF line ends only")
		require.Equal(t, 12, bytes.Count(r.body, []byte("\r\n")), "a header row and one row per movement")
		cr := csv.NewReader(bytes.NewReader(r.body))
		cr.FieldsPerRecord = len(gateway.CSVHeader)
		recs, err := cr.ReadAll()
		require.NoError(t, err)
		require.Equal(t, gateway.CSVHeader, recs[0])
		var want [][]string
		for _, m := range st.Data.Movements {
			want = append(want, []string{m.At, m.TransactionID, m.Type, m.Description, strconv.FormatInt(m.AmountCents, 10), strconv.FormatInt(m.BalanceCents, 10)})
		}
		require.Equal(t, want, recs[1:], "the JSON statement's rows")

		// format=json is the default; an empty format counts as not sent.
		for _, f := range []string{"json", ""} {
			q := stmtQuery(from, to, "") + "&format=" + f
			r := b.do("GET", statementPath+q, nil)
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"), q)
		}

		// A window without movements: opening = closing, no movements.
		later := b.statement(to, to.Add(time.Hour))
		require.Equal(t, st.Data.Closing, later.Data.Opening)
		require.Equal(t, st.Data.Closing, later.Data.Closing)
		require.Empty(t, later.Data.Movements)
		require.Contains(t, string(b.do("GET", statementPath+stmtQuery(to, to.Add(time.Hour), ""), nil).body), `"movements":[]`)

		// HEAD answers as GET does, without a body.
		r = b.send(b.raw, "HEAD", statementPath+stmtQuery(from, to, "csv"), nil, "")
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, "text/csv; charset=utf-8", r.header.Get("Content-Type"))
		require.Empty(t, r.body)
	})
}

// TestStatementWindowBounds: from is inclusive and to exclusive, to the
// millisecond; consecutive windows chain (one's closing is the next's
// opening).
func TestStatementWindowBounds(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, stmtFees)
		start := b.clock.Now().Add(-time.Minute)
		_, ok, _, _ := stmtActivity(b)
		end := b.clock.Now().Add(time.Minute)
		all := b.statement(start, end).Data.Movements
		require.Len(t, all, 11)
		// The completed payout: its two lines at one instant, a second
		// after the movements before it.
		require.Equal(t, []line{{ok, "payout", -1000}, {ok, "payout_fee", -25}}, lines(all[2:4]))
		require.Equal(t, all[2].At, all[3].At)
		at, err := time.Parse(pix.TimeFormat, all[2].At)
		require.NoError(t, err)

		// Exactly at from: included.
		st := b.statement(at, end)
		require.Equal(t, all[2:], st.Data.Movements)
		require.Equal(t, all[1].BalanceCents, st.Data.Opening)
		// Exactly at to: excluded.
		st = b.statement(start, at)
		require.Equal(t, all[:2], st.Data.Movements)
		require.Equal(t, all[1].BalanceCents, st.Data.Closing)
		// A millisecond later, the other way round.
		st = b.statement(at.Add(time.Millisecond), end)
		require.Equal(t, all[4:], st.Data.Movements)
		require.Equal(t, all[3].BalanceCents, st.Data.Opening)
		st = b.statement(start, at.Add(time.Millisecond))
		require.Equal(t, all[:4], st.Data.Movements)
		require.Equal(t, all[3].BalanceCents, st.Data.Closing)
		// Another offset names the same instant.
		sp := time.FixedZone("BRT", -3*3600)
		st = b.statement(at.In(sp), end.In(sp))
		require.Equal(t, all[2:], st.Data.Movements)
	})
}

// TestStatementErrors: a bad query is 400 in the wallet shape, its message
// naming the parameter; the window may be 366 days, not more; credentials
// come first.
func TestStatementErrors(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		from := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		f := from.Format(time.RFC3339)
		const (
			badDate = " must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z"
			badTo   = "'to' must be after 'from'"
			badSpan = "'to' must be at most 366 days after 'from'"
			badFmt  = "'format' must be one of json, csv (default json)"
		)
		day := 24 * time.Hour
		q := func(kv ...string) string {
			v := url.Values{}
			for pair := range slices.Chunk(kv, 2) {
				v.Set(pair[0], pair[len(pair)-1])
			}
			return "?" + v.Encode()
		}
		later := from.Add(day).Format(time.RFC3339)
		for _, tc := range []struct{ query, want string }{
			{"", "'from'" + badDate + "; 'to'" + badDate},
			{q("to", later), "'from'" + badDate},
			{q("from", f), "'to'" + badDate},
			{q("from", "yesterday", "to", later), "'from'" + badDate},
			{q("from", f, "to", "2026-13-01T00:00:00Z"), "'to'" + badDate},
			{q("from", "2026-01-02", "to", later), "'from'" + badDate},
			{q("from", f, "to", f), badTo},
			{q("from", f, "to", from.Add(-time.Millisecond).Format(time.RFC3339Nano)), badTo},
			{q("from", f, "to", from.Add(367*day).Format(time.RFC3339)), badSpan},
			{q("from", f, "to", from.Add(366*day+time.Millisecond).Format(time.RFC3339Nano)), badSpan},
			{q("from", f, "to", later, "format", "xml"), badFmt},
			{q("from", f, "to", later, "format", "CSV"), badFmt},
			{q("from", f, "to", f, "format", "xml"), badTo + "; " + badFmt},
		} {
			r := b.do("GET", statementPath+tc.query, nil)
			require.Equal(t, http.StatusBadRequest, r.status, tc.query)
			require.Equal(t, "application/json", r.header.Get("Content-Type"))
			require.Equal(t, map[string]any{"statusCode": json.Number("400"), "message": "Invalid request parameters: " + tc.want + "."}, r.json, tc.query)
		}

		// 366 days exactly is allowed, in either format.
		for _, format := range []string{"json", "csv"} {
			r := b.do("GET", statementPath+q("from", f, "to", from.Add(366*day).Format(time.RFC3339), "format", format), nil)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
		}
		require.Equal(t, 366*day, gateway.MaxStatementWindow)

		// Credentials first: 401 in the wallet shape, even for a bad query.
		for _, query := range []string{stmtQuery(from, from.Add(day), ""), "?format=xml"} {
			for _, cred := range []backoffice.Credentials{{}, {ClientID: b.cred.ClientID, ClientSecret: "wrong"}} {
				r := b.do("GET", statementPath+query, nil, cred)
				require.Equal(t, http.StatusUnauthorized, r.status)
				require.Equal(t, map[string]any{"statusCode": json.Number("401"), "message": "Falha na autenticação."}, r.json)
			}
		}

		// Other methods: 405 in the wallet shape, as on the other wallet GETs.
		r := b.send(b.raw, "POST", statementPath+stmtQuery(from, from.Add(day), ""), "{}", "application/json")
		require.Equal(t, http.StatusMethodNotAllowed, r.status)
		require.Equal(t, map[string]any{"statusCode": json.Number("405"), "message": "Method not allowed"}, r.json)
		require.Equal(t, b.send(b.raw, "POST", "/api/v1/wallet/balance", "{}", "application/json").header.Get("Allow"), r.header.Get("Allow"))
	})
}

// TestStatementDocumentsWindow: the document states the window limit the
// server enforces.
func TestStatementDocumentsWindow(t *testing.T) {
	t.Parallel()
	doc := loadAPIDocument(t)
	op := doc.Paths.Find(statementPath).Get
	require.NotNil(t, op)
	days := fmt.Sprintf("%d days", gateway.MaxStatementWindow/(24*time.Hour))
	var names []string
	for _, p := range op.Parameters {
		names = append(names, p.Value.Name)
		if p.Value.Name == "to" {
			require.Contains(t, p.Value.Description, days)
		}
	}
	require.Equal(t, []string{"from", "to", "format"}, names)
	ok := op.Responses.Status(http.StatusOK).Value
	require.NotNil(t, ok.Content.Get("application/json"))
	require.NotNil(t, ok.Content.Get("text/csv"))
	for _, status := range []int{400, 401, 429, 500} {
		require.NotNil(t, op.Responses.Status(status), "%d", status)
	}
}

// TestStatementTenantIsolation: a client's statement holds its own
// movements only.
func TestStatementTenantIsolation(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, stmtFees)
		from := b.clock.Now().Add(-time.Minute)
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		// The other client: a paid charge and a payout, between the first
		// client's movements.
		c := b.do("POST", "/api/v1/gateway/request-qrcode", validCharge("iso-other", "50.00"), other)
		require.Equal(t, http.StatusCreated, c.status, string(c.body))
		otherCharge := c.json["payment_id"].(string)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/charges/"+otherCharge+"/pay", nil, other).status)
		charge, ok, fail, rev := stmtActivity(b)
		r := b.do("POST", "/api/v1/gateway/pix-payment", payout("5", "CPF", "52998224725"), other)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		otherPayout := r.json["transaction_id"].(string)
		to := b.clock.Now().Add(time.Minute)

		mine := b.statement(from, to)
		require.Len(t, mine.Data.Movements, 11)
		for _, m := range mine.Data.Movements {
			require.Contains(t, []string{charge, ok, fail, rev}, m.TransactionID)
		}
		theirs := b.statement(from, to, other)
		require.Equal(t, []line{{otherCharge, "charge", 5000}, {otherPayout, "payout", -500}}, lines(theirs.Data.Movements))
		require.Equal(t, int64(4500), theirs.Data.Closing)
		r = b.do("GET", statementPath+stmtQuery(from, to, "csv"), nil, other)
		require.Equal(t, http.StatusOK, r.status)
		for _, id := range []string{charge, ok, fail, rev} {
			require.NotContains(t, string(r.body), id)
		}
	})
}

// TestStatementAbortsOnFailure: when the statement fails after its 200 was
// sent, the connection is cut before the body ends — the client reads an
// error, never a body that looks complete — and the failure is logged.
func TestStatementAbortsOnFailure(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			var raw *sql.DB
			b := setup(t, func(t *testing.T) *store.DB {
				if dialect == "postgres" {
					u := testkit.MigratedPostgresURL(t)
					db := testkit.OpenPostgresURL(t, u)
					var err error
					raw, err = sql.Open("pgx", u)
					require.NoError(t, err)
					t.Cleanup(func() { _ = raw.Close() })
					return db
				}
				path := filepath.Join(t.TempDir(), "pixgate.db")
				db, err := sqlite.Open(context.Background(), path)
				require.NoError(t, err)
				t.Cleanup(func() { _ = db.Close() })
				_, err = db.Migrate(context.Background())
				require.NoError(t, err)
				raw, err = sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
				require.NoError(t, err)
				t.Cleanup(func() { _ = raw.Close() })
				return db
			}, stmtFees)
			from := b.clock.Now().Add(-time.Minute)
			b.fund("1000")
			// Enough movements that the body is well on its way (over
			// 32 KiB) before the broken one.
			var last string
			for i := 0; i < 200; i++ {
				r := b.send(b.raw, "POST", "/api/v1/gateway/pix-payment", payout("0.01", "CPF", "52998224725"), "application/json")
				require.Equal(t, http.StatusOK, r.status, string(r.body))
				last = r.json["transaction_id"].(string)
			}
			to := b.clock.Now().Add(time.Minute)
			whole := b.do("GET", statementPath+stmtQuery(from, to, "json"), nil)
			require.Equal(t, http.StatusOK, whole.status)
			require.Greater(t, len(whole.body), 64<<10)

			// The last movement can no longer be read: the balances still
			// can, so the statement starts and fails at its end.
			_, err := raw.ExecContext(context.Background(), `UPDATE postings SET available_fee = NULL WHERE transaction_id = $1`, last)
			require.NoError(t, err)
			for _, format := range []string{"json", "csv"} {
				req := b.request("GET", statementPath+stmtQuery(from, to, format), nil, "")
				resp, err := b.raw.Do(req)
				require.NoError(t, err, "the 200 and the start of the body were sent")
				require.Equal(t, http.StatusOK, resp.StatusCode)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.ErrorIs(t, err, io.ErrUnexpectedEOF, "the body must not look complete (%s, %d bytes)", format, len(body))
				require.GreaterOrEqual(t, len(body), 32<<10, "the start of the body was sent")
			}
			logs := b.logs.String()
			require.Equal(t, 2, strings.Count(logs, `"msg":"statement aborted"`), logs)
			require.NotContains(t, logs, "panic serving request")
			require.NotContains(t, logs, b.cred.ClientSecret)
			// Each aborted request still has its request line, marked.
			abortedLines := 0
			for _, line := range strings.Split(logs, "\n") {
				var e struct {
					Msg, Route string
					Aborted    bool
				}
				if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "request" && e.Aborted && e.Route == "GET /api/v1/wallet/statement" {
					abortedLines++
				}
			}
			require.Equal(t, 2, abortedLines, logs)

			// The server goes on serving.
			require.Equal(t, http.StatusOK, b.do("GET", "/api/v1/wallet/balance", nil).status)
			require.Equal(t, http.StatusOK, b.do("GET", statementPath+stmtQuery(from, from.Add(time.Second), ""), nil).status)
		})
	}
}
