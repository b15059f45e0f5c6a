package gateway

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// Statement limits and messages (README.md#statement).
const (
	MsgStatementOK     = "Statement generated successfully."
	MaxStatementWindow = 366 * 24 * time.Hour
	issueStatementTime = "must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z"
	issueStatementTo   = "must be after 'from'"
	issueStatementSpan = "must be at most 366 days after 'from'"
	issueStatementFmt  = "must be one of json, csv (default json)"
)

// Statement formats.
const (
	StatementJSON = "json"
	StatementCSV  = "csv"
)

// StatementQuery is the raw query of GET /api/v1/wallet/statement.
type StatementQuery struct {
	From, To, Format string
}

// Movement is one line of a statement: a change of the available balance.
type Movement struct {
	At            time.Time
	TransactionID string     // the charge, payout (payment_id) or refund
	Type          string     // e.g. "charge", "charge_fee", "payout", "payout_fee"
	Description   string     // the same, in words
	Amount        pix.Amount // signed: credits positive, debits negative
	Balance       pix.Amount // the available balance after it
}

// movementKinds names the movements a posting's principal and fee parts
// make, by posting kind.
var movementKinds = map[string]struct{ typ, desc, feeType, feeDesc string }{
	"cashin.paid":      {"charge", "Pix charge received", "charge_fee", "Charge fee"},
	"cashout.reserved": {"payout", "Pix payment sent", "payout_fee", "Payment fee"},
	"cashout.failed":   {"payout_failed", "Pix payment failed: amount returned", "payout_fee_returned", "Pix payment failed: fee returned"},
	"cashout.reversed": {"payout_returned", "Pix payment returned by the recipient", "", ""},
	"refund.reserved":  {"refund", "Pix charge refunded", "", ""},
	"refund.failed":    {"refund_failed", "Refund failed: amount returned", "", ""},
	"dispute.block":    {"dispute_block", "MED dispute: amount blocked", "", ""},
	"dispute.release":  {"dispute_release", "MED dispute: block released", "", ""},
	"med.return":       {"med_return", "MED return to the payer", "", ""},
	"debt.payment":     {"debt_payment", "MED debt paid", "", ""},
	"transfer.out":     {"transfer", "Transfer to another account", "", ""},
	"transfer.in":      {"transfer", "Transfer from another account", "", ""},
	"split.out":        {"split", "Split of a charge to another account", "", ""},
	"split.in":         {"split", "Split of a charge received", "", ""},
}

// movements splits a stored movement into the statement's lines: the
// principal, then the fee if it has one (fee reports whether it does).
func movements(m store.AvailableMovement) (principal, fee Movement, hasFee bool) {
	k, ok := movementKinds[m.Kind]
	if !ok {
		k.typ, k.desc, k.feeType, k.feeDesc = m.Kind, m.Kind, m.Kind+".fee", m.Kind
	}
	if m.Fee == 0 {
		return Movement{m.At, m.TransactionID, k.typ, k.desc, m.Delta, m.Balance}, Movement{}, false
	}
	return Movement{m.At, m.TransactionID, k.typ, k.desc, m.Delta - m.Fee, m.Balance - m.Fee},
		Movement{m.At, m.TransactionID, k.feeType, k.feeDesc, m.Fee, m.Balance}, true
}

// Statement is one client's statement for a window, its balances read;
// Write streams its movements.
type Statement struct {
	From, To         time.Time
	Format           string
	Opening, Closing pix.Amount

	db       *store.DB
	clientID string
	lastSeq  int64
}

// Statement validates q and reads the opening and closing balances of
// client c's statement. Errors: EInvalid for bad dates, to not after from,
// a window over 366 days or an unknown format, the message naming each
// bad parameter.
func (s *Service) Statement(ctx context.Context, c pix.Client, q StatementQuery) (*Statement, error) {
	st := &Statement{Format: q.Format, db: s.db, clientID: c.ID}
	var is issues
	for _, p := range []struct {
		name, v string
		dst     *time.Time
	}{{"from", q.From, &st.From}, {"to", q.To, &st.To}} {
		t, err := time.Parse(time.RFC3339Nano, p.v)
		if err != nil {
			is.add(p.name, timeIssue(issueStatementTime, p.v))
			continue
		}
		*p.dst = t
	}
	if len(is) == 0 {
		switch {
		case !st.To.After(st.From):
			is.add("to", issueStatementTo)
		case st.To.Sub(st.From) > MaxStatementWindow:
			is.add("to", issueStatementSpan)
		}
	}
	switch q.Format {
	case "":
		st.Format = StatementJSON
	case StatementJSON, StatementCSV:
	default:
		is.add("format", issueStatementFmt)
	}
	if len(is) > 0 {
		return nil, historyError(is)
	}
	b, err := s.db.StatementBounds(ctx, c.ID, st.From, st.To)
	if err != nil {
		return nil, fmt.Errorf("statement: %w", err)
	}
	st.Opening, st.Closing, st.lastSeq = b.Opening, b.Closing, b.LastSeq
	return st, nil
}

// Each calls fn with each movement of the statement in order, streaming
// them from the database; it stops at fn's first error and returns it.
func (st *Statement) Each(ctx context.Context, fn func(Movement) error) error {
	return st.db.StatementMovements(ctx, st.clientID, st.From, st.To, st.lastSeq, func(m store.AvailableMovement) error {
		principal, fee, hasFee := movements(m)
		if err := fn(principal); err != nil || !hasFee {
			return err
		}
		return fn(fee)
	})
}

// ContentType is the media type of the statement's format.
func (st *Statement) ContentType() string {
	if st.Format == StatementCSV {
		return "text/csv; charset=utf-8"
	}
	return "application/json; charset=utf-8"
}

// CSVHeader is the header row of a CSV statement: the JSON movement's fields.
var CSVHeader = []string{"at", "transaction_id", "type", "description", "amount_cents", "balance_cents"}

// Write writes the statement in its format to w, the movements streamed
// through a small buffer: memory does not grow with their number. JSON is
// the API's body {statusCode, message, data}; CSV is RFC 4180 (CRLF line
// ends, a header row). An error after the first bytes leaves w truncated:
// the caller must not present it as complete.
func (st *Statement) Write(ctx context.Context, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	var err error
	if st.Format == StatementCSV {
		err = st.writeCSV(ctx, bw)
	} else {
		err = st.writeJSON(ctx, bw)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

func (st *Statement) writeCSV(ctx context.Context, w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("statement csv: %w", err)
	}
	rec := make([]string, len(CSVHeader))
	err := st.Each(ctx, func(m Movement) error {
		rec[0], rec[1], rec[2], rec[3] = pix.FormatTime(m.At), m.TransactionID, m.Type, m.Description
		rec[4], rec[5] = strconv.FormatInt(int64(m.Amount), 10), strconv.FormatInt(int64(m.Balance), 10)
		return cw.Write(rec)
	})
	if err != nil {
		return fmt.Errorf("statement csv: %w", err)
	}
	cw.Flush()
	return cw.Error()
}

// movementJSON is a movement as the JSON statement writes it.
type movementJSON struct {
	At            string `json:"at"`
	TransactionID string `json:"transaction_id"`
	Type          string `json:"type"`
	Description   string `json:"description"`
	AmountCents   int64  `json:"amount_cents"`
	BalanceCents  int64  `json:"balance_cents"`
}

func (st *Statement) writeJSON(ctx context.Context, w io.Writer) error {
	head, err := json.Marshal(struct {
		From    string `json:"from"`
		To      string `json:"to"`
		Opening int64  `json:"opening_balance_cents"`
		Closing int64  `json:"closing_balance_cents"`
	}{pix.FormatTime(st.From), pix.FormatTime(st.To), int64(st.Opening), int64(st.Closing)})
	if err != nil {
		return fmt.Errorf("statement json: %w", err)
	}
	msg, err := json.Marshal(MsgStatementOK)
	if err != nil {
		return fmt.Errorf("statement json: %w", err)
	}
	// The envelope is written around the streamed movements: the head's
	// closing brace gives way to the movements array.
	if _, err := fmt.Fprintf(w, `{"statusCode":200,"message":%s,"data":%s,"movements":[`, msg, head[:len(head)-1]); err != nil {
		return fmt.Errorf("statement json: %w", err)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	first := true
	err = st.Each(ctx, func(m Movement) error {
		if !first {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		}
		first = false
		return enc.Encode(movementJSON{pix.FormatTime(m.At), m.TransactionID, m.Type, m.Description, int64(m.Amount), int64(m.Balance)})
	})
	if err != nil {
		return fmt.Errorf("statement json: %w", err)
	}
	if _, err := io.WriteString(w, "]}}\n"); err != nil {
		return fmt.Errorf("statement json: %w", err)
	}
	return nil
}
