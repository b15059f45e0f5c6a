package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"
)

// Movement types of a statement: each change of the available balance is
// one movement, and a fee is a movement of its own after its operation's.
const (
	MovementCharge            = "charge"              // a paid charge (credit)
	MovementChargeFee         = "charge_fee"          // its cash-in fee (debit)
	MovementPayout            = "payout"              // a payout held from the balance (debit)
	MovementPayoutFee         = "payout_fee"          // its fee (debit)
	MovementPayoutFailed      = "payout_failed"       // a failed payout's amount back (credit)
	MovementPayoutFeeReturned = "payout_fee_returned" // a failed payout's fee back (credit)
	MovementPayoutReturned    = "payout_returned"     // a payout returned by its receiver (credit; the fee is kept)
	MovementRefund            = "refund"              // a refund held from the balance (debit)
	MovementRefundFailed      = "refund_failed"       // a failed refund's amount back (credit)
)

// Statement is a window of the wallet's available balance: the balance
// when it opens and when it closes, and every movement in between, in the
// order they were applied. Opening plus the sum of the movements' amounts
// is Closing.
type Statement struct {
	Response
	From, To         time.Time // the window: From inclusive, To exclusive
	Opening, Closing Amount    // the available balance at From and at To
	Movements        []Movement
}

// Movement is one change of the available balance.
type Movement struct {
	At            time.Time
	TransactionID string // the charge's payment_id, the payout's transaction_id or the refund's refund_id
	Type          string // MovementCharge, MovementChargeFee, …
	Description   string // the type in words (Portuguese)
	Amount        Amount // signed: credits positive, debits negative
	Balance       Amount // the available balance after it
}

// Statement reads the statement of the window from (inclusive) to
// (exclusive), at most 366 days (GET /api/v1/wallet/statement): a window
// the server refuses is a 400 *Error whose Message names the bad
// parameter. It is retried like every read, a cut answer included. The
// whole statement is held in memory; StatementCSV streams one instead.
func (c *Client) Statement(ctx context.Context, from, to time.Time) (*Statement, error) {
	var out Statement
	resp, err := c.stream(ctx, "/api/v1/wallet/statement", statementQuery(from, to, "json"), "application/json",
		func(body io.Reader) (bool, error) {
			var raw struct {
				Data struct {
					From      time.Time `json:"from"`
					To        time.Time `json:"to"`
					Opening   int64     `json:"opening_balance_cents"`
					Closing   int64     `json:"closing_balance_cents"`
					Movements []struct {
						At            time.Time `json:"at"`
						TransactionID string    `json:"transaction_id"`
						Type          string    `json:"type"`
						Description   string    `json:"description"`
						Amount        int64     `json:"amount_cents"`
						Balance       int64     `json:"balance_cents"`
					} `json:"movements"`
				} `json:"data"`
			}
			if err := json.NewDecoder(body).Decode(&raw); err != nil {
				return true, fmt.Errorf("client: decoding GET /api/v1/wallet/statement answer: %w", err)
			}
			d := raw.Data
			out = Statement{From: d.From, To: d.To, Opening: Centavos(d.Opening), Closing: Centavos(d.Closing),
				Movements: make([]Movement, len(d.Movements))}
			for i, m := range d.Movements {
				out.Movements[i] = Movement{At: m.At, TransactionID: m.TransactionID, Type: m.Type,
					Description: m.Description, Amount: Centavos(m.Amount), Balance: Centavos(m.Balance)}
			}
			return true, nil
		})
	if err != nil {
		return nil, err
	}
	out.Response = resp
	return &out, nil
}

// StatementCSV writes the statement of the window from (inclusive) to
// (exclusive) to w as CSV (RFC 4180: CRLF line ends; a header row at,
// transaction_id, type, description, amount_cents, balance_cents; amounts
// in signed centavos), copying the answer as it arrives: memory does not
// grow with the number of movements. Errors before the first byte reaches
// w are as Statement's, and retried alike; an error after it (the answer
// cut) is returned and leaves w incomplete. The client's HTTP timeout (30 s
// by default, see WithHTTPClient) bounds the wait for the answer and each
// pause in it, not the whole copy: a long statement may take longer.
func (c *Client) StatementCSV(ctx context.Context, from, to time.Time, w io.Writer) error {
	_, err := c.stream(ctx, "/api/v1/wallet/statement", statementQuery(from, to, "csv"), "text/csv",
		func(body io.Reader) (bool, error) {
			cw := &countingWriter{w: w}
			if _, err := io.Copy(cw, body); err != nil {
				return cw.n == 0, fmt.Errorf("client: copying the CSV statement: %w", err)
			}
			return true, nil
		})
	return err
}

func statementQuery(from, to time.Time, format string) url.Values {
	return url.Values{
		"from":   {from.UTC().Format(time.RFC3339Nano)},
		"to":     {to.UTC().Format(time.RFC3339Nano)},
		"format": {format},
	}
}

// stream makes a GET whose 2xx answer, of media type accept, is handed to
// consume as it arrives instead of being read whole first. Failures and
// retries are a read's (see do). consume reports whether it may be run
// again: if reading the answer failed and it may, the request is retried
// like after a network error.
func (c *Client) stream(ctx context.Context, path string, query url.Values, accept string,
	consume func(body io.Reader) (again bool, err error)) (Response, error) {
	target := c.target(path, query)
	// The HTTP client's Timeout bounds a whole exchange, which a long
	// answer read as it arrives may rightly exceed: here it bounds the
	// wait for the answer's headers and then each pause in its body.
	h, stall := c.http, c.http.Timeout
	if stall > 0 {
		hc := *h
		hc.Timeout = 0
		h = &hc
	}

	return c.retrying(ctx, func(attempt int) (Response, bool, error) {
		resp, final, err := c.streamAttempt(ctx, h, stall, target, accept, attempt, consume)
		return resp, !final, err
	})
}

// errStalled cancels a streamed answer that made no progress for the
// client's timeout.
var errStalled = errors.New("client: the answer stalled")

// streamAttempt makes attempt number attempt of stream with h; if stall is
// positive, the answer's headers and every read of its body must come
// within stall. final says the error must not be retried.
func (c *Client) streamAttempt(ctx context.Context, h *http.Client, stall time.Duration, target, accept string, attempt int,
	consume func(io.Reader) (bool, error)) (resp Response, final bool, err error) {
	resp.Attempts = attempt
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	progress := func() {}
	if stall > 0 {
		timer := time.AfterFunc(stall, func() { cancel(errStalled) })
		defer timer.Stop()
		progress = func() { timer.Reset(stall) }
	}
	defer func() {
		if err != nil && errors.Is(context.Cause(ctx), errStalled) {
			err = fmt.Errorf("%w for more than %s: %w", errStalled, stall, err)
		}
	}()
	req, err := c.newRequest(ctx, http.MethodGet, target, nil, "")
	if err != nil {
		return resp, true, err
	}
	req.Header.Set("Accept", accept)
	res, err := h.Do(req)
	if err != nil {
		return resp, false, err
	}
	progress()
	defer res.Body.Close()
	resp = responseOf(res)
	resp.Attempts = attempt
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		return resp, true, redirectError(http.MethodGet, req.URL.Path, res.StatusCode, res.Header)
	}
	if res.StatusCode < 200 || res.StatusCode >= 300 {
		raw, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
		if err != nil {
			// The answer was cut: as unknown an outcome as no answer.
			return resp, false, fmt.Errorf("client: reading answer: %w", err)
		}
		e := decodeError(resp, res.StatusCode, raw)
		return resp, res.StatusCode != http.StatusTooManyRequests && res.StatusCode < 500, e
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != accept {
		return resp, true, fmt.Errorf("client: GET %s answered %d with %q, not %s", req.URL.Path, res.StatusCode,
			res.Header.Get("Content-Type"), accept)
	}
	body := &readErrReader{r: res.Body, progress: progress}
	again, err := consume(body)
	if err != nil {
		// Only a cut answer is retried, and only while nothing of it has
		// been handed on.
		return resp, body.err == nil || !again, err
	}
	// Read what is left (the JSON's final newline) so that the connection
	// can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
	return resp, false, nil
}

// readErrReader remembers the first failure to read the answer and
// reports each read that brought bytes to progress.
type readErrReader struct {
	r        io.Reader
	progress func()
	err      error
}

func (b *readErrReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.progress()
	}
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
