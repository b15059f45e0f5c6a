package gateway

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/store"
)

func TestByClient(t *testing.T) {
	var due []store.Transaction
	for i, client := range []string{"a", "b", "a", "a", "b", "c", "a"} {
		due = append(due, store.Transaction{ID: fmt.Sprint("p", i+1), ClientID: client})
	}
	ids := func(batches [][]store.Transaction) [][]string {
		var out [][]string
		for _, b := range batches {
			var ids []string
			for _, t := range b {
				ids = append(ids, t.ID)
			}
			out = append(out, ids)
		}
		return out
	}
	require.Equal(t, [][]string{{"p1", "p3"}, {"p2", "p5"}, {"p4", "p7"}, {"p6"}}, ids(byClient(due, 2)))
	require.Equal(t, [][]string{{"p1", "p3", "p4", "p7"}, {"p2", "p5"}, {"p6"}}, ids(byClient(due, 25)))
	require.Empty(t, byClient(nil, 25))
}

func TestByChargeKeepsEachChargesRefundsTogetherInOrder(t *testing.T) {
	var due []store.DueRefund
	for i, charge := range []string{"a", "b", "a", "c", "a", "b"} {
		due = append(due, store.DueRefund{ID: fmt.Sprint("r", i+1), ChargeID: charge})
	}
	r := func(i int) store.DueRefund { return due[i-1] }
	require.Equal(t, [][]store.DueRefund{{r(1), r(3), r(5)}, {r(2), r(6)}, {r(4)}}, byCharge(due))
	require.Empty(t, byCharge(nil))
}
