package client_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
)

func TestAmountMarshal(t *testing.T) {
	for _, tc := range []struct {
		a    client.Amount
		json string
		str  string
	}{
		{client.Centavos(1000), "10", "10.00"},
		{client.Centavos(1050), "10.5", "10.50"},
		{client.Centavos(1055), "10.55", "10.55"},
		{client.Centavos(1), "0.01", "0.01"},
		{client.Centavos(10), "0.1", "0.10"},
		{client.Centavos(0), "0", "0.00"},
		{client.Centavos(-5), "-0.05", "-0.05"},
		{client.Centavos(100000000), "1000000", "1000000.00"},
		{client.Reais("25.90"), "25.9", "25.90"},
	} {
		got, err := json.Marshal(tc.a)
		require.NoError(t, err)
		require.Equal(t, tc.json, string(got))
		require.Equal(t, tc.str, tc.a.String())
		var back client.Amount
		require.NoError(t, json.Unmarshal(got, &back))
		require.Equal(t, tc.a, back)
	}
}

func TestAmountUnmarshalExact(t *testing.T) {
	for in, want := range map[string]int64{
		"10": 1000, "10.5": 1050, "10.55": 1055, "10.50": 1050, "0.01": 1, "10.5500": 1055,
		"1e2": 10000, "1.05E1": 1050, "105e-1": 1050, "-3.1": -310, "0": 0,
		// A float64 would turn these into 0.28999… or lose the last centavo.
		"0.29": 29, "92233720368547758.07": 9223372036854775807,
	} {
		var a client.Amount
		require.NoError(t, json.Unmarshal([]byte(in), &a), in)
		require.Equal(t, want, a.Centavos(), in)
	}
	for _, in := range []string{`"10"`, "10.555", "0.001", "1e-3", "92233720368547758.08", "1.", ".5", "--1", "1e+-2", "true"} {
		var a client.Amount
		require.Error(t, json.Unmarshal([]byte(in), &a), in)
	}
	var inStruct struct {
		A client.Amount `json:"a"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"a":null}`), &inStruct))
	require.Zero(t, inStruct.A)
}

func TestReais(t *testing.T) {
	a, err := client.ParseReais("25.90")
	require.NoError(t, err)
	require.Equal(t, client.Centavos(2590), a)
	for _, bad := range []string{"", "25,90", "1.234", "1e2", "abc", "R$ 1"} {
		_, err := client.ParseReais(bad)
		require.Error(t, err, bad)
	}
	require.Panics(t, func() { client.Reais("1.234") })
}
