package storetest

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// statementVersion is the migration that added the statement's columns
// to postings and accounts, and backfilled them.
const statementVersion = 13

// exerciseStatement runs the behaviours of the statement's movements: what
// PostAll records for each posting that moves an available balance (its
// amount, fee part, balance after and sequence number, in time order, time
// never going back on an account), the windows StatementBounds and
// StatementMovements read, and what migration 13 backfills for postings
// written before it.
func exerciseStatement(t *testing.T, open Opener) {
	exerciseMovementOrder(t, open)
	exerciseMovementsBackfill(t, open)
}

// exerciseMovementOrder checks that PostAll numbers a batch's credits, then
// its debits, in time order, and never takes an account's time back.
func exerciseMovementOrder(t *testing.T, open Opener) {
	ctx := context.Background()
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

	t.Run("PostAll numbers a batch's credits, then its debits, in time order and never takes an account's time back", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		a, b := NewClient(t, db), NewClient(t, db)
		postAll := func(ws ...store.PostingWrite) {
			t.Helper()
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.PostAll(ctx, ws, sec(60)) }))
		}
		w := func(id string, c pix.Client, at time.Time, p ledger.Posting) store.PostingWrite {
			return store.PostingWrite{ID: id, ClientID: c.ID, TransactionID: "tx-" + id, Posting: p, At: at}
		}
		// One batch, its postings out of time order, two clients, one
		// posting that moves no available balance, one at the batch's now.
		postAll(
			w("a1", a, sec(5), ledger.CashinPaid(1000, 20)),
			w("b1", b, time.Time{}, ledger.CashinPaid(300, 0)),
			w("a2", a, sec(2), ledger.CashinPaid(500, 0)),
			w("a3", a, sec(3), ledger.PayoutReserved(200, 5)),
			w("a4", a, sec(4), ledger.PayoutCompleted(200, 5)),
			w("b2", b, sec(1), ledger.CashinPaid(100, 0)),
		)
		// A later batch whose time is before the account's latest movement
		// takes that movement's time; within a batch a credit goes before
		// a debit dated earlier, which then takes the credit's time.
		postAll(w("a5", a, sec(1), ledger.RefundReserved(75)))
		postAll(w("a6", a, sec(10), ledger.RefundFailed(75)), w("a7", a, sec(4), ledger.PayoutReserved(100, 5)))

		type mv struct {
			tx, kind            string
			at                  time.Time
			delta, fee, balance pix.Amount
			seq                 int64
		}
		want := map[string][]mv{
			a.ID: {
				// Credits first, then debits, each in time order; a debit
				// dated before a credit of its batch takes the credit's time.
				{"tx-a2", "cashin.paid", sec(2), 500, 0, 500, 1},
				{"tx-a1", "cashin.paid", sec(5), 980, -20, 1480, 2},
				{"tx-a3", "cashout.reserved", sec(5), -205, -5, 1275, 3},
				{"tx-a5", "refund.reserved", sec(5), -75, 0, 1200, 4},
				{"tx-a6", "refund.failed", sec(10), 75, 0, 1275, 5},
				{"tx-a7", "cashout.reserved", sec(10), -105, -5, 1170, 6},
			},
			b.ID: {
				{"tx-b2", "cashin.paid", sec(1), 100, 0, 100, 1},
				{"tx-b1", "cashin.paid", sec(60), 300, 0, 400, 2},
			},
		}
		for _, c := range []pix.Client{a, b} {
			var got []mv
			require.NoError(t, db.StatementMovements(ctx, c.ID, t0, sec(3600), math.MaxInt64, func(m store.AvailableMovement) error {
				got = append(got, mv{m.TransactionID, m.Kind, m.At, m.Delta, m.Fee, m.Balance, m.Seq})
				return nil
			}))
			require.Equal(t, want[c.ID], got, "movements of %s", c.ID)
		}
		requireBalances(t, db, a.ID, 1170, 105)
		require.NoError(t, db.CheckLedger(ctx))

		// Windows: the opening is the balance after the last movement
		// before from, the closing after the last before to; a window on
		// time is a run of sequence numbers, so adjacent windows chain.
		cuts := []time.Time{t0, sec(2), sec(3), sec(5), sec(5).Add(time.Millisecond), sec(10), sec(3600)}
		for i := 1; i < len(cuts); i++ {
			bounds, err := db.StatementBounds(ctx, a.ID, cuts[i-1], cuts[i])
			require.NoError(t, err)
			var opening, closing pix.Amount
			var last int64
			var seqs []int64
			for _, m := range want[a.ID] {
				if m.at.Before(cuts[i-1]) {
					opening = m.balance
				}
				if m.at.Before(cuts[i]) {
					closing, last = m.balance, m.seq
					if !m.at.Before(cuts[i-1]) {
						seqs = append(seqs, m.seq)
					}
				}
			}
			require.Equal(t, store.StatementBounds{Opening: opening, Closing: closing, LastSeq: last}, bounds, "window [%v, %v)", cuts[i-1], cuts[i])
			var got []int64
			require.NoError(t, db.StatementMovements(ctx, a.ID, cuts[i-1], cuts[i], bounds.LastSeq, func(m store.AvailableMovement) error {
				got = append(got, m.Seq)
				return nil
			}))
			require.Equal(t, seqs, got, "window [%v, %v)", cuts[i-1], cuts[i])
		}
		// Movements past the last sequence number read are left out: a
		// statement's lines stay those its closing balance counts.
		var got []int64
		require.NoError(t, db.StatementMovements(ctx, a.ID, t0, sec(3600), 4, func(m store.AvailableMovement) error {
			got = append(got, m.Seq)
			return nil
		}))
		require.Equal(t, []int64{1, 2, 3, 4}, got)
	})
}

// exerciseMovementsBackfill checks that migration 13 backfills the movements
// of postings written before it.
func exerciseMovementsBackfill(t *testing.T, open Opener) {
	ctx := context.Background()
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

	t.Run("Migration 13 backfills the movements of postings written before it", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		migrateDownTo(t, db, statementVersion-1)

		a, b := oldClient(t, db), oldClient(t, db)
		payout := newPayout(a, "po-1", sec(100))
		payout.Tax = 10
		failed := newPayout(a, "po-2", sec(100))
		failed.Tax = 5
		// Postings as version 12 wrote them, in an order unlike their
		// times; two of a at the same time (then in id order).
		type old struct {
			id      string
			c       pix.Client
			tx      string
			at      time.Time
			p       ledger.Posting
			fee     pix.Amount // the fee part migration 13 must find
			movesAv bool
		}
		olds := []old{
			{"p-07", a, "ref-1", sec(9), ledger.RefundReserved(50), 0, true},
			{"p-02", a, "ch-1", sec(1), ledger.CashinPaid(1000, 30), -30, true},
			{"p-05", a, payout.ID, sec(4), ledger.PayoutCompleted(300, 10), 0, false},
			{"p-04", a, payout.ID, sec(3), ledger.PayoutReserved(300, 10), -10, true},
			{"p-01", b, "ch-b", sec(2), ledger.CashinPaid(400, 4), -4, true},
			{"p-06b", a, failed.ID, sec(6), ledger.PayoutFailed(100, 5), 5, true},
			{"p-06a", a, failed.ID, sec(6), ledger.PayoutReserved(100, 5), -5, true},
			{"p-08", a, "ref-1", sec(10), ledger.RefundFailed(50), 0, true},
			{"p-09", a, payout.ID, sec(11), ledger.PayoutReversed(300), 0, true},
			{"p-03", a, "ch-2", sec(2), ledger.CashinPaid(200, 0), 0, true},
		}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for _, p := range []pix.Transaction{payout, failed} {
				// The columns of version 12 (later ones do not exist yet).
				if err := store.RawExec(ctx, tx, `INSERT INTO transactions (id, client_id, type, external_id, request_hash, status,
					amount, tax, created_at, send_state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '')`,
					p.ID, p.ClientID, p.Type, p.ExternalID, p.RequestHash, p.Status, int64(p.Amount), int64(p.Tax), p.CreatedAt.UnixMilli()); err != nil {
					return err
				}
			}
			sums := map[string]int64{}
			for _, o := range olds {
				if err := store.RawExec(ctx, tx, `INSERT INTO postings (id, client_id, transaction_id, kind, created_at) VALUES ($1, $2, $3, $4, $5)`,
					o.id, o.c.ID, o.tx, o.p.Kind, o.at.UnixMilli()); err != nil {
					return err
				}
				for i, e := range o.p.Entries {
					acct := store.AccountID(o.c.ID, e.Account)
					if err := store.RawExec(ctx, tx, `INSERT INTO entries (posting_id, seq, account_id, amount) VALUES ($1, $2, $3, $4)`,
						o.id, i, acct, int64(e.Amount)); err != nil {
						return err
					}
					sums[acct] += int64(e.Amount)
				}
			}
			for acct, sum := range sums {
				if err := store.RawExec(ctx, tx, `UPDATE accounts SET balance = $1 WHERE id = $2`, sum, acct); err != nil {
					return err
				}
			}
			return nil
		}))

		applied, err := db.Migrate(ctx)
		require.NoError(t, err)
		require.Contains(t, applied, int64(statementVersion))
		require.NoError(t, db.CheckLedger(ctx))

		// Expected: each client's postings that move available, in
		// (time, id) order, numbered from 1 with the running balance.
		slices.SortFunc(olds, func(x, y old) int {
			if c := x.at.Compare(y.at); c != 0 {
				return c
			}
			return strings.Compare(x.id, y.id)
		})
		type mv struct {
			tx, kind            string
			at                  time.Time
			delta, fee, balance pix.Amount
			seq                 int64
		}
		want := map[string][]mv{}
		for _, o := range olds {
			if !o.movesAv {
				require.Zero(t, o.p.Available(), o.id)
				continue
			}
			ms := want[o.c.ID]
			var bal pix.Amount
			if len(ms) > 0 {
				bal = ms[len(ms)-1].balance
			}
			want[o.c.ID] = append(ms, mv{o.tx, o.p.Kind, o.at, o.p.Available(), o.fee, bal + o.p.Available(), int64(len(ms) + 1)})
		}
		read := func(c pix.Client) []mv {
			var got []mv
			require.NoError(t, db.StatementMovements(ctx, c.ID, t0, sec(3600), math.MaxInt64, func(m store.AvailableMovement) error {
				got = append(got, mv{m.TransactionID, m.Kind, m.At, m.Delta, m.Fee, m.Balance, m.Seq})
				return nil
			}))
			return got
		}
		for _, c := range []pix.Client{a, b} {
			require.Equal(t, want[c.ID], read(c), "backfilled movements of %s", c.ID)
		}
		last := want[a.ID][len(want[a.ID])-1]
		requireBalances(t, db, a.ID, last.balance, 0)
		bounds, err := db.StatementBounds(ctx, a.ID, sec(2), sec(3600))
		require.NoError(t, err)
		require.Equal(t, store.StatementBounds{Opening: want[a.ID][0].balance, Closing: last.balance, LastSeq: last.seq}, bounds)

		// The accounts' counts and times were backfilled too: a posting
		// written now continues the numbering, and one dated before the
		// account's last backfilled movement takes that movement's time.
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.PostAll(ctx, []store.PostingWrite{{ID: "p-10", ClientID: a.ID, TransactionID: "ch-3",
				Posting: ledger.CashinPaid(100, 1), At: sec(5)}}, sec(5))
		}))
		next := mv{"ch-3", "cashin.paid", last.at, 99, -1, last.balance + 99, last.seq + 1}
		require.Equal(t, append(want[a.ID], next), read(a))
		require.Equal(t, want[b.ID], read(b))
		require.NoError(t, db.CheckLedger(ctx))
	})
}

// migrateDownTo takes db's schema back to version by running, newest
// first, the Down section of every later migration file and unrecording
// them, as goose's down would: the tests of a migration's effect on rows
// written before it, with the Opener's already migrated database. The
// Down sections must be plain statements (no StatementBegin blocks).
func migrateDownTo(t *testing.T, db *store.DB, version int64) {
	t.Helper()
	ctx := context.Background()
	files, err := store.Migrations(db.Dialect())
	require.NoError(t, err)
	entries, err := fs.ReadDir(files, ".")
	require.NoError(t, err)
	slices.Reverse(entries)
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		for _, e := range entries {
			v, err := strconv.ParseInt(strings.SplitN(e.Name(), "_", 2)[0], 10, 64)
			if err != nil {
				return fmt.Errorf("migration %s: %w", e.Name(), err)
			}
			if v <= version {
				continue
			}
			text, err := fs.ReadFile(files, e.Name())
			if err != nil {
				return err
			}
			_, down, ok := strings.Cut(string(text), "-- +goose Down")
			if !ok {
				return fmt.Errorf("migration %s has no Down section", e.Name())
			}
			var sql strings.Builder
			for _, line := range strings.Split(down, "\n") {
				if !strings.HasPrefix(strings.TrimSpace(line), "--") {
					sql.WriteString(line + "\n")
				}
			}
			for _, stmt := range strings.Split(sql.String(), ";") {
				if stmt = strings.TrimSpace(stmt); stmt != "" {
					if err := store.RawExec(ctx, tx, stmt); err != nil {
						return fmt.Errorf("migration %s down: %w", e.Name(), err)
					}
				}
			}
			if err := store.RawExec(ctx, tx, `DELETE FROM goose_db_version WHERE version_id = $1`, v); err != nil {
				return err
			}
		}
		return nil
	}))
}
