package gateway

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/store"
)

func TestByClient(t *testing.T) {
	var due []store.DueSettlement
	for i, client := range []string{"a", "b", "a", "a", "b", "c", "a"} {
		due = append(due, store.DueSettlement{ID: fmt.Sprint("p", i+1), ClientID: client})
	}
	require.Equal(t, [][]string{{"p1", "p3"}, {"p2", "p5"}, {"p4", "p7"}, {"p6"}}, byClient(due, 2))
	require.Equal(t, [][]string{{"p1", "p3", "p4", "p7"}, {"p2", "p5"}, {"p6"}}, byClient(due, 25))
	require.Empty(t, byClient(nil, 25))
}

func TestByChargeKeepsEachChargesRefundsTogetherInOrder(t *testing.T) {
	var due []store.DueRefund
	for i, charge := range []string{"a", "b", "a", "c", "a", "b"} {
		due = append(due, store.DueRefund{ID: fmt.Sprint("r", i+1), ChargeID: charge})
	}
	require.Equal(t, [][]string{{"r1", "r3", "r5"}, {"r2", "r6"}, {"r4"}}, byCharge(due))
	require.Empty(t, byCharge(nil))
}
