package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store/batch"
)

// StepSendGrouped applies st as Tx.StepSend does, in its own committed
// transaction, and reports whether the row was still as read. Concurrent
// calls share the transaction and, per table, one guarded multi-row
// UPDATE (group commit; a group that fails is run again call by call):
// the claims and steps of many transfers at once cost one statement.
func (db *DB) StepSendGrouped(ctx context.Context, st SendStep) (bool, error) {
	return db.steps.Do(ctx, st)
}

func newStepGroup(db *DB) *batch.Batch[SendStep, bool] {
	return batch.New(db.d.GroupPayouts, maxGroup, db.stepSends)
}

func (db *DB) stepSends(ctx context.Context, steps []SendStep) ([]bool, error) {
	var out []bool
	err := db.Write(ctx, func(tx *Tx) error {
		var err error
		out, err = tx.StepSends(ctx, steps)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("step sends: %w", err)
	}
	return out, nil
}

// StepSends applies each of steps as StepSend does and reports, in order,
// which applied: one guarded UPDATE per table for all of them. A row named
// twice is stepped by its first step there, and by the later ones one
// after another, each against the row as the earlier ones left it.
func (tx *Tx) StepSends(ctx context.Context, steps []SendStep) ([]bool, error) {
	applied := make(map[string]bool, len(steps))
	byTable := make(map[string][]SendStep)
	first := make(map[string]bool, len(steps))
	var again []int // steps of a row already named
	for i, st := range steps {
		key := stepTable(st) + "/" + st.ID
		if first[key] {
			again = append(again, i)
			continue
		}
		first[key] = true
		byTable[stepTable(st)] = append(byTable[stepTable(st)], st)
	}
	for table, ss := range byTable {
		var q strings.Builder
		q.WriteString(`UPDATE ` + table + ` SET send_state = v.column3,
			settle_at = CASE WHEN v.column8 IS NULL THEN v.column4 ELSE ` + table + `.settle_at END, send_lease = v.column8,
			end_to_end_id = COALESCE(v.column5, ` + table + `.end_to_end_id), send_attempts = ` + table + `.send_attempts + v.column6
			FROM (VALUES `)
		castTuples(&q, 1, len(ss), []string{"TEXT", "TEXT", "TEXT", "BIGINT", "TEXT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"})
		q.WriteString(`) AS v WHERE ` + table + `.id = v.column1 AND ` + table + `.send_state = v.column2 AND ` +
			table + `.settle_at = v.column7` + leaseGuard(table, "v.column8", "v.column9", "v.column10") + ` RETURNING ` + table + `.id`)
		args := make([]any, 0, 10*len(ss))
		for _, st := range ss {
			attempt := 0
			if st.Attempt {
				attempt = 1
			}
			args = append(args, st.ID, st.WasState, st.State, nullMS(st.Next), nullString(st.EndToEndID), attempt, nullMS(st.WasSettleAt),
				nullMS(st.Hold), nullMS(st.Now), nullMS(st.Held))
		}
		ids, err := selectAll(ctx, &tx.Q, func(row scanner) (string, error) {
			var id string
			return id, row.Scan(&id)
		}, q.String(), args...)
		if err != nil {
			return nil, fmt.Errorf("step sends of %s: %w", table, err)
		}
		for _, id := range ids {
			applied[table+"/"+id] = true
		}
	}
	out := make([]bool, len(steps))
	for i, st := range steps {
		out[i] = applied[stepTable(st)+"/"+st.ID]
	}
	for _, i := range again {
		ok, err := tx.StepSend(ctx, steps[i])
		if err != nil {
			return nil, err
		}
		out[i] = ok
	}
	return out, nil
}

// stepTable is the table whose row st steps.
func stepTable(st SendStep) string {
	switch st.Kind {
	case pix.TransferRefund:
		return "refunds"
	case pix.TransferReturn:
		return "unmatched_receipts"
	}
	return "transactions"
}

// PayoutStep is one payout's step with its status change, for
// Tx.StepPayouts: the step (guarded by the send state and settle_at it
// was decided from, and by its hold if it holds one; never a claim) and, when To is set, the move from status From to To
// (confirmed_at set when Confirmed is non-zero).
type PayoutStep struct {
	Step      SendStep
	From, To  pix.TxStatus
	Confirmed time.Time
}

// StepPayouts applies each of ps in one guarded UPDATE and reports which
// applied: a payout whose row is no longer as read (send state, settle_at
// and status) is left as it is. Each payout may appear once.
func (tx *Tx) StepPayouts(ctx context.Context, ps []PayoutStep) ([]bool, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	var q strings.Builder
	q.WriteString(`UPDATE transactions SET send_state = v.column3, settle_at = v.column4,
		end_to_end_id = COALESCE(v.column5, transactions.end_to_end_id), send_attempts = transactions.send_attempts + v.column6,
		status = COALESCE(v.column8, transactions.status), confirmed_at = COALESCE(v.column9, transactions.confirmed_at),
		send_lease = NULL
		FROM (VALUES `)
	castTuples(&q, 1, len(ps), []string{"TEXT", "TEXT", "TEXT", "BIGINT", "TEXT", "BIGINT", "BIGINT", "TEXT", "BIGINT", "TEXT", "BIGINT"})
	q.WriteString(`) AS v WHERE transactions.id = v.column1 AND transactions.send_state = v.column2
		AND transactions.settle_at = v.column7 AND transactions.status = v.column10
		AND (v.column11 IS NULL OR transactions.send_lease = v.column11) RETURNING transactions.id`)
	args := make([]any, 0, 11*len(ps))
	for _, p := range ps {
		st := p.Step
		attempt := 0
		if st.Attempt {
			attempt = 1
		}
		args = append(args, st.ID, st.WasState, st.State, nullMS(st.Next), nullString(st.EndToEndID), attempt, nullMS(st.WasSettleAt),
			nullString(string(p.To)), nullMS(p.Confirmed), p.From, nullMS(st.Held))
	}
	ids, err := selectAll(ctx, &tx.Q, func(row scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("step payouts: %w", err)
	}
	applied := make(map[string]bool, len(ids))
	for _, id := range ids {
		applied[id] = true
	}
	out := make([]bool, len(ps))
	for i, p := range ps {
		out[i] = applied[p.Step.ID]
	}
	return out, nil
}
