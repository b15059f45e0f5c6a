package client_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
)

// recurrenceData is a recurrence's data as the API answers it.
const recurrenceData = `{"recurrence_id":"7a1e3c5b-9d2f-4e6a-8b1c-3d5e7f9a1b2c","external_id":"sub-1001",
	"status":"APPROVED","cancelled_by":null,"payer":{"name":"Maria Souza","document":"52998224725"},
	"contract":"CTR-1001","description":"Plano mensal","frequency":"MONTHLY","amount":49.9,
	"start_date":"2026-12-10","end_date":null,"retry":"THREE_IN_SEVEN_DAYS","next_due_date":"2027-01-10",
	"first_payment":49.9,"first_payment_id":"3f1c2a9e-7b4d-4c21-9a6e-2d8f5b7c1e04",
	"created_at":"2026-11-20T13:45:00.000Z","updated_at":"2026-12-10T12:00:00.000Z",
	"splits":[{"account_id":"5d7e1c2a-3b4f-4a6e-9c8d-7e6f5a4b3c2d","percent":12.5},{"account_id":"8c1d2e3f-4a5b-4c6d-9e7f-0a1b2c3d4e5f","percent":0.05}],
	"charges":[{"payment_id":"5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e","due_date":"2026-12-10","amount":49.9,"status":"PAID","attempts":2}]}`

// exchange is one request a fake server received.
type exchange struct {
	method, path, idemKey, ctype string
	body                         []byte
}

// fakeServer answers each request with the next of answers (status and
// body), repeating the last, and records what it received.
type fakeServer struct {
	mu       sync.Mutex
	received []exchange
	answers  []fakeAnswer
	url      string
}

type fakeAnswer struct {
	status int
	body   string
	header map[string]string
}

func newFakeServer(t *testing.T, answers ...fakeAnswer) *fakeServer {
	t.Helper()
	f := &fakeServer{answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.received)
		f.received = append(f.received, exchange{method: r.Method, path: r.URL.Path,
			idemKey: r.Header.Get("Idempotency-Key"), ctype: r.Header.Get("Content-Type"), body: body})
		a := f.answers[min(n, len(f.answers)-1)]
		f.mu.Unlock()
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fakeServer) requests() []exchange {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]exchange(nil), f.received...)
}

func (f *fakeServer) client(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(f.url, "id", "secret", client.WithBackoff(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	return c
}

// TestCreateRecurrenceOnTheWire: the request is written as the API reads it
// (exact amounts; no end_date or first_payment when unset), carries an
// Idempotency-Key kept across a retry, and the 201 is read back, its nulls
// included.
func TestCreateRecurrenceOnTheWire(t *testing.T) {
	t.Parallel()
	created := `{"statusCode":201,"recurrence_id":"7a1e3c5b-9d2f-4e6a-8b1c-3d5e7f9a1b2c","external_id":"sub-1001",
		"status":"CREATED","qrcode":"00020101021226…6304ABCD","qrcode_image":"iVBORw0KGgo=","frequency":"MONTHLY",
		"amount":49.9,"start_date":"2026-12-10","end_date":null,"retry":"NONE","next_due_date":"2026-12-10",
		"first_payment":null,"first_payment_id":null,"splits":[{"account_id":"5d7e1c2a-3b4f-4a6e-9c8d-7e6f5a4b3c2d","amount":10}]}`
	f := newFakeServer(t, fakeAnswer{status: http.StatusServiceUnavailable, body: `{}`},
		fakeAnswer{status: http.StatusCreated, body: created, header: map[string]string{"Idempotent-Replayed": "true"}})
	c := f.client(t)
	rec, err := c.CreateRecurrence(t.Context(), client.RecurrenceRequest{ExternalID: "sub-1001",
		Payer:    client.RecurrencePayer{Name: "Maria Souza", Document: "52998224725"},
		Contract: "CTR-1001", Description: "Plano mensal", Frequency: client.FrequencyMonthly,
		StartDate: "2026-12-10", Amount: client.Reais("49.90"), Retry: client.RetryNone,
		PostbackURL: "https://merchant.example.com/webhooks/pix"})
	require.NoError(t, err)
	got := f.requests()
	require.Len(t, got, 2, "a 503 is retried")
	for _, r := range got {
		require.Equal(t, http.MethodPost, r.method)
		require.Equal(t, "/api/v1/gateway/recurrences", r.path)
		require.Equal(t, "application/json", r.ctype)
		require.JSONEq(t, `{"external_id":"sub-1001","payer":{"name":"Maria Souza","document":"52998224725"},
			"contract":"CTR-1001","description":"Plano mensal","frequency":"MONTHLY","start_date":"2026-12-10",
			"amount":49.9,"retry":"NONE","postbackUrl":"https://merchant.example.com/webhooks/pix"}`, string(r.body))
	}
	require.NotEmpty(t, got[0].idemKey)
	require.Equal(t, got[0].idemKey, got[1].idemKey, "the retry repeats the key")
	require.Equal(t, got[0].idemKey, rec.IdempotencyKey)
	require.True(t, rec.IdempotentReplayed)
	require.Equal(t, http.StatusCreated, rec.StatusCode)
	require.Equal(t, "7a1e3c5b-9d2f-4e6a-8b1c-3d5e7f9a1b2c", rec.RecurrenceID)
	require.Equal(t, client.RecurrenceCreated, rec.Status)
	require.Equal(t, client.Reais("49.90"), rec.Amount)
	require.Equal(t, "2026-12-10", rec.NextDueDate)
	require.Empty(t, rec.EndDate)
	require.Nil(t, rec.FirstPayment)
	require.Empty(t, rec.FirstPaymentID)
	require.Equal(t, []client.Split{client.SplitAmount("5d7e1c2a-3b4f-4a6e-9c8d-7e6f5a4b3c2d", client.Reais("10.00"))}, rec.Splits)

	// Journey 3 with an end date and a key of the caller's.
	f = newFakeServer(t, fakeAnswer{status: http.StatusCreated, body: `{"statusCode":201,"recurrence_id":"r","status":"CREATED",
		"end_date":"2027-12-10","first_payment":19.9,"first_payment_id":"3f1c2a9e-7b4d-4c21-9a6e-2d8f5b7c1e04"}`})
	rec, err = f.client(t).CreateRecurrence(t.Context(), client.RecurrenceRequest{ExternalID: "sub-1002",
		EndDate: "2027-12-10", Amount: client.Reais("49.90"), FirstPayment: client.Reais("19.90"), IdempotencyKey: "k-1"})
	require.NoError(t, err)
	var sent map[string]any
	require.NoError(t, json.Unmarshal(f.requests()[0].body, &sent))
	require.Equal(t, "2027-12-10", sent["end_date"])
	require.Equal(t, 19.9, sent["first_payment"])
	require.Equal(t, "k-1", f.requests()[0].idemKey)
	require.Equal(t, "2027-12-10", rec.EndDate)
	require.Equal(t, client.Reais("19.90"), *rec.FirstPayment)
	require.Equal(t, "3f1c2a9e-7b4d-4c21-9a6e-2d8f5b7c1e04", rec.FirstPaymentID)
}

// TestCreateRecurrenceErrors: a 400 names its fields, and retries that run
// out leave a *RetryError with the key to repeat the creation with.
func TestCreateRecurrenceErrors(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, fakeAnswer{status: http.StatusBadRequest, body: `{"statusCode":400,"message":"Invalid request parameters",
		"error":"Bad Request","details":[{"field":"start_date","issue":"must be at least 2 days after today (São Paulo date)"}]}`})
	_, err := f.client(t).CreateRecurrence(t.Context(), client.RecurrenceRequest{ExternalID: "x"})
	require.True(t, client.IsBadRequest(err), "%v", err)
	require.Equal(t, "start_date", client.AsError(err).Details[0].Field)
	require.Nil(t, client.AsRetryError(err), "a 400 settles the request")
	require.Len(t, f.requests(), 1)

	f = newFakeServer(t, fakeAnswer{status: http.StatusBadGateway, body: `{}`})
	c, err := client.New(f.url, "id", "secret", client.WithMaxRetries(1), client.WithBackoff(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	_, err = c.CreateRecurrence(t.Context(), client.RecurrenceRequest{ExternalID: "x", IdempotencyKey: "k-2"})
	re := client.AsRetryError(err)
	require.NotNil(t, re, "%v", err)
	require.Equal(t, "k-2", re.Key)
	require.Equal(t, 2, re.Attempts)
}

// TestRecurrenceRead: every field of the data is read, nulls as empty.
func TestRecurrenceRead(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, fakeAnswer{status: http.StatusOK, body: `{"statusCode":200,"data":` + recurrenceData + `}`})
	r, err := f.client(t).Recurrence(t.Context(), "7a1e3c5b-9d2f-4e6a-8b1c-3d5e7f9a1b2c")
	require.NoError(t, err)
	require.Equal(t, exchange{method: http.MethodGet, path: "/api/v1/gateway/recurrences/7a1e3c5b-9d2f-4e6a-8b1c-3d5e7f9a1b2c", body: []byte{}},
		f.requests()[0])
	require.Equal(t, http.StatusOK, r.StatusCode)
	require.Equal(t, client.RecurrenceApproved, r.Status)
	require.Empty(t, r.CancelledBy)
	require.Equal(t, client.RecurrencePayer{Name: "Maria Souza", Document: "52998224725"}, r.Payer)
	require.Equal(t, "CTR-1001", r.Contract)
	require.Equal(t, "Plano mensal", r.Description)
	require.Equal(t, client.FrequencyMonthly, r.Frequency)
	require.Equal(t, client.RetryThreeInSevenDays, r.Retry)
	require.Equal(t, client.Reais("49.90"), r.Amount)
	require.Empty(t, r.EndDate)
	require.Equal(t, "2027-01-10", r.NextDueDate)
	require.Equal(t, client.Reais("49.90"), *r.FirstPayment)
	require.Equal(t, time.Date(2026, 11, 20, 13, 45, 0, 0, time.UTC), r.CreatedAt)
	require.Equal(t, []client.Split{client.SplitPercent("5d7e1c2a-3b4f-4a6e-9c8d-7e6f5a4b3c2d", client.Percents("12.50")),
		client.SplitPercent("8c1d2e3f-4a5b-4c6d-9e7f-0a1b2c3d4e5f", client.Percents("0.05"))}, r.Splits)
	require.Equal(t, []client.RecurrenceCharge{{PaymentID: "5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e", DueDate: "2026-12-10",
		Amount: client.Reais("49.90"), Status: client.StatusPaid, Attempts: 2}}, r.Charges)

	f = newFakeServer(t, fakeAnswer{status: http.StatusNotFound, body: `{"statusCode":404,"message":"Recurrence not found","error":"Not Found"}`})
	_, err = f.client(t).Recurrence(t.Context(), "a/b")
	require.True(t, client.IsNotFound(err), "%v", err)
	require.NotContains(t, f.requests()[0].path, "a/b", "the id stays one segment")
}

// cancelledData is recurrenceData cancelled by whom.
func cancelledData(t *testing.T, by string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(recurrenceData), &m))
	m["status"], m["cancelled_by"], m["next_due_date"] = "CANCELLED", by, nil
	raw, err := json.Marshal(map[string]any{"statusCode": 200, "data": m})
	require.NoError(t, err)
	return string(raw)
}

// TestCancelRecurrence: the cancellation is read; a 422 on the first
// attempt is the answer; a 422 on a retry after an attempt whose answer
// was lost reads the recurrence, and returns it only if the merchant's
// cancellation is what it shows.
func TestCancelRecurrence(t *testing.T) {
	t.Parallel()
	refused := fakeAnswer{status: http.StatusUnprocessableEntity,
		body: `{"statusCode":422,"message":"Recurrence is already final","error":"Unprocessable Entity"}`}
	lost := fakeAnswer{status: http.StatusBadGateway, body: `{}`}

	f := newFakeServer(t, fakeAnswer{status: http.StatusOK, body: cancelledData(t, "merchant")})
	r, err := f.client(t).CancelRecurrence(t.Context(), "r1")
	require.NoError(t, err)
	require.Equal(t, client.RecurrenceCancelled, r.Status)
	require.Equal(t, client.CancelledByMerchant, r.CancelledBy)
	require.Empty(t, r.NextDueDate)
	require.Equal(t, exchange{method: http.MethodPost, path: "/api/v1/gateway/recurrences/r1/cancel", body: []byte{}}, f.requests()[0],
		"no body, no key")

	f = newFakeServer(t, refused)
	_, err = f.client(t).CancelRecurrence(t.Context(), "r1")
	require.Equal(t, http.StatusUnprocessableEntity, client.AsError(err).StatusCode, "%v", err)
	require.Len(t, f.requests(), 1, "a first 422 is the answer: nothing is read")

	f = newFakeServer(t, lost, refused, fakeAnswer{status: http.StatusOK, body: cancelledData(t, "merchant")})
	r, err = f.client(t).CancelRecurrence(t.Context(), "r1")
	require.NoError(t, err)
	require.Equal(t, client.CancelledByMerchant, r.CancelledBy)
	got := f.requests()
	require.Len(t, got, 3)
	require.Equal(t, "/api/v1/gateway/recurrences/r1/cancel", got[1].path)
	require.Equal(t, http.MethodGet, got[2].method)
	require.Equal(t, "/api/v1/gateway/recurrences/r1", got[2].path)

	f = newFakeServer(t, lost, refused, fakeAnswer{status: http.StatusOK, body: cancelledData(t, "payer")})
	_, err = f.client(t).CancelRecurrence(t.Context(), "r1")
	require.Equal(t, http.StatusUnprocessableEntity, client.AsError(err).StatusCode,
		"cancelled by the payer first: the merchant's cancellation was refused")
}

// TestSandboxRecurrenceActions: each action's path and answer; none is
// repeated after a 5xx, and a 429 is waited out.
func TestSandboxRecurrenceActions(t *testing.T) {
	t.Parallel()
	data := `{"statusCode":200,"data":` + recurrenceData + `}`
	for action, call := range map[string]func(*client.Client, context.Context, string) (*client.RecurrenceDetails, error){
		"approve":         (*client.Client).SandboxApproveRecurrence,
		"reject":          (*client.Client).SandboxRejectRecurrence,
		"cancel-by-payer": (*client.Client).SandboxCancelRecurrenceByPayer,
	} {
		f := newFakeServer(t, fakeAnswer{status: http.StatusOK, body: data})
		r, err := call(f.client(t), t.Context(), "r1")
		require.NoError(t, err, action)
		require.Equal(t, "/api/v1/sandbox/recurrences/r1/"+action, f.requests()[0].path)
		require.Equal(t, "sub-1001", r.ExternalID)

		f = newFakeServer(t, fakeAnswer{status: http.StatusServiceUnavailable, body: `{}`}, fakeAnswer{status: http.StatusOK, body: data})
		_, err = call(f.client(t), t.Context(), "r1")
		require.Equal(t, http.StatusServiceUnavailable, client.AsError(err).StatusCode, action)
		require.Len(t, f.requests(), 1, "%s is not repeated after a 5xx", action)
	}

	f := newFakeServer(t, fakeAnswer{status: http.StatusTooManyRequests, body: `{}`, header: map[string]string{"Retry-After": "0"}},
		fakeAnswer{status: http.StatusOK, body: `{"statusCode":200,"payment_id":"5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e","due_date":"2027-01-10","amount":49.9}`})
	cyc, err := f.client(t).SandboxNextCycle(t.Context(), "r1")
	require.NoError(t, err)
	require.Len(t, f.requests(), 2, "a 429 is waited out")
	require.Equal(t, "/api/v1/sandbox/recurrences/r1/next-cycle", f.requests()[1].path)
	require.Equal(t, client.SandboxCycle{Response: cyc.Response, PaymentID: "5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e",
		DueDate: "2027-01-10", Amount: client.Reais("49.90")}, *cyc)
	f = newFakeServer(t, fakeAnswer{status: http.StatusInternalServerError, body: `{}`})
	_, err = f.client(t).SandboxNextCycle(t.Context(), "r1")
	require.Error(t, err)
	require.Len(t, f.requests(), 1, "a second cycle is never created by a retry")

	f = newFakeServer(t, fakeAnswer{status: http.StatusOK, body: `{"statusCode":200,"message":"Debit failed","data":{
		"payment_id":"5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e","type":"cashin","status":"PENDING","amount":49.9,
		"recurrence_id":"7a1e3c5b-9d2f-4e6a-8b1c-3d5e7f9a1b2c"}}`})
	res, err := f.client(t).SandboxFailCharge(t.Context(), "5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e")
	require.NoError(t, err)
	require.Equal(t, "/api/v1/sandbox/charges/5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e/fail", f.requests()[0].path)
	require.Equal(t, client.StatusPending, res.Status)
	require.Equal(t, "7a1e3c5b-9d2f-4e6a-8b1c-3d5e7f9a1b2c", res.RecurrenceID)
	f = newFakeServer(t, fakeAnswer{status: http.StatusBadGateway, body: `{}`})
	_, err = f.client(t).SandboxFailCharge(t.Context(), "p")
	require.Error(t, err)
	require.Len(t, f.requests(), 1, "a second attempt is never failed by a retry")
}

// TestWebhookRecurrenceEvents: each recurrence event reaches its own
// function with its fields; a cycle charge's pix.cashin.paid carries the
// recurrence_id.
func TestWebhookRecurrenceEvents(t *testing.T) {
	var got []client.Event
	record := func(_ context.Context, e client.Event) error { got = append(got, e); return nil }
	var other []string
	h, err := client.WebhookHandler(testWebhookSecret, client.EventHandlers{
		OnRecurrenceApproved: record, OnRecurrenceRejected: record, OnRecurrenceExpired: record,
		OnRecurrenceCancelled: record, OnRecurrenceChargeFailed: record, OnCashinPaid: record,
		OnOther: func(_ context.Context, e client.Event) error { other = append(other, e.Event); return nil },
	})
	require.NoError(t, err)
	const rid = "7a1e3c5b-9d2f-4e6a-8b1c-3d5e7f9a1b2c"
	bodies := []string{
		`{"id":"evt_1","event":"pix.recurrence.approved","recurrence_id":"` + rid + `","external_id":"sub-1001","status":"APPROVED","occurred_at":"2026-11-20T14:00:00.000Z"}`,
		`{"id":"evt_2","event":"pix.recurrence.rejected","recurrence_id":"` + rid + `","external_id":"sub-1001","status":"REJECTED","occurred_at":"2026-11-20T14:00:00.000Z"}`,
		`{"id":"evt_3","event":"pix.recurrence.expired","recurrence_id":"` + rid + `","external_id":"sub-1001","status":"EXPIRED","occurred_at":"2026-11-20T14:00:00.000Z"}`,
		`{"id":"evt_4","event":"pix.recurrence.cancelled","recurrence_id":"` + rid + `","external_id":"sub-1001","status":"CANCELLED","cancelled_by":"payer","occurred_at":"2026-11-20T14:00:00.000Z"}`,
		`{"id":"evt_5","event":"pix.recurrence.charge_failed","recurrence_id":"` + rid + `","external_id":"sub-1001","status":"APPROVED","payment_id":"5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e","attempts":4,"occurred_at":"2026-12-15T14:00:00.000Z"}`,
		`{"id":"evt_6","event":"pix.cashin.paid","statusTransaction":"PAID","value":49.9,"payment_id":"5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e","external_id":null,"type":"cashin","tax":0.1,"recurrence_id":"` + rid + `","occurred_at":"2026-12-10T14:00:00.000Z"}`,
	}
	for _, b := range bodies {
		var head struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(b), &head))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, signedRequest(t, testWebhookSecret, head.ID, b))
		require.Equal(t, http.StatusNoContent, w.Code, b)
	}
	require.Empty(t, other, "every recurrence event has its own function")
	require.Len(t, got, len(bodies))
	for i, name := range []string{client.EventRecurrenceApproved, client.EventRecurrenceRejected, client.EventRecurrenceExpired,
		client.EventRecurrenceCancelled, client.EventRecurrenceChargeFailed, client.EventCashinPaid} {
		require.Equal(t, name, got[i].Event)
		require.Equal(t, rid, got[i].RecurrenceID)
	}
	require.Equal(t, client.RecurrenceApproved, got[0].Status)
	require.Equal(t, "sub-1001", got[0].ExternalID)
	require.Equal(t, client.CancelledByPayer, got[3].CancelledBy)
	require.Empty(t, got[0].CancelledBy)
	require.Equal(t, "5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e", got[4].PaymentID)
	require.Equal(t, 4, got[4].Attempts)
	require.Equal(t, client.Reais("49.90"), got[5].Value)
}
