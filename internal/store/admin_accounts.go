package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
)

// availableChunk is how many clients one statement of AvailableBalances
// asks for: far below either database's limit on placeholders.
const availableChunk = 500

// AvailableBalances returns the available balance of each client of ids
// that has one, which the panel lists beside the clients' names; a client
// missing from the map has none yet, which reads as zero.
func (q *Q) AvailableBalances(ctx context.Context, ids []string) (map[string]pix.Amount, error) {
	out := make(map[string]pix.Amount, len(ids))
	type row struct {
		client  string
		balance int64
	}
	scan := func(s scanner) (r row, err error) { return r, s.Scan(&r.client, &r.balance) }
	for len(ids) > 0 {
		part := ids[:min(len(ids), availableChunk)]
		ids = ids[len(part):]
		var b strings.Builder
		b.WriteString(`SELECT client_id, balance FROM accounts WHERE kind = $1 AND client_id IN `)
		tuples(&b, 2, 1, len(part))
		args := make([]any, 0, len(part)+1)
		args = append(args, string(ledger.Available))
		for _, id := range part {
			args = append(args, id)
		}
		rows, err := selectAll(ctx, q, scan, b.String(), args...)
		if err != nil {
			return nil, fmt.Errorf("available balances: %w", err)
		}
		for _, r := range rows {
			out[r.client] = pix.Amount(r.balance)
		}
	}
	return out, nil
}
