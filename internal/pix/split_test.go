package pix_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
)

// TestPlanSplits: the shares of awkward amounts: thirds, one centavo,
// percents summing to 100 on an odd net, amounts beyond net.
func TestPlanSplits(t *testing.T) {
	t.Parallel()
	p := func(ps ...int64) []pix.Split {
		out := make([]pix.Split, len(ps))
		for i, v := range ps {
			out[i] = pix.Split{Index: i, Percent: v}
		}
		return out
	}
	a := func(as ...pix.Amount) []pix.Split {
		out := make([]pix.Split, len(as))
		for i, v := range as {
			out[i] = pix.Split{Index: i, Amount: v}
		}
		return out
	}
	cases := []struct {
		name   string
		net    pix.Amount
		splits []pix.Split
		want   []pix.Amount
	}{
		{"thirds of 100.00", 10000, p(3333, 3333, 3334), []pix.Amount{3333, 3333, 3334}},
		{"thirds of 1.00", 100, p(3333, 3333, 3334), []pix.Amount{33, 33, 33}},
		{"thirds of 0.10", 10, p(3333, 3333, 3334), []pix.Amount{3, 3, 3}},
		{"one centavo, half up then capped", 1, p(5000, 5000), []pix.Amount{1, 0}},
		{"one centavo at 10 %", 1, p(1000), []pix.Amount{0}},
		{"100 % on an odd net", 99, p(5000, 5000), []pix.Amount{50, 49}},
		{"100 % on 1.01 in three", 101, p(3333, 3333, 3334), []pix.Amount{34, 34, 33}},
		{"to the nearest centavo", 1990, p(2025), []pix.Amount{403}},
		{"exactly half rounds up", 10, p(2500), []pix.Amount{3}},
		{"0.01 % of the largest net", pix.MaxAmount, p(1), []pix.Amount{10000}},
		{"100 % of the largest net", pix.MaxAmount, p(10000), []pix.Amount{pix.MaxAmount}},
		{"amounts beyond net", 900, a(600, 399, 1), []pix.Amount{600, 300, 0}},
		{"amounts within net", 1000, a(250, 250), []pix.Amount{250, 250}},
		{"nothing to share", 0, p(5000), []pix.Amount{0}},
		{"a fee above what came", -5, a(100), []pix.Amount{0}},
	}
	for _, tc := range cases {
		got := pix.PlanSplits(tc.net, tc.splits)
		require.Equal(t, tc.want, got, tc.name)
		var sum pix.Amount
		for _, g := range got {
			sum += g
		}
		require.LessOrEqual(t, sum, max(tc.net, 0), "%s: the shares never exceed net", tc.name)
	}
}

// TestProRata: what each receiver gives back of a refund or a return.
func TestProRata(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		total, net    pix.Amount
		credited, out []pix.Amount
	}{
		{"a fifth of net gives a fifth", 1000, 9900, []pix.Amount{1980}, []pix.Amount{200}},
		{"half up", 1001, 9900, []pix.Amount{1980, 3333}, []pix.Amount{200, 337}},
		{"one centavo", 1, 100, []pix.Amount{50, 50}, []pix.Amount{1, 0}},
		{"all of net to receivers", 100, 300, []pix.Amount{100, 100, 100}, []pix.Amount{33, 33, 33}},
		{"a receiver credited 0", 500, 1000, []pix.Amount{0, 500}, []pix.Amount{0, 250}},
		{"net 0", 500, 0, []pix.Amount{0}, []pix.Amount{0}},
		{"the largest amounts", pix.MaxAmount, pix.MaxAmount, []pix.Amount{pix.MaxAmount}, []pix.Amount{pix.MaxAmount}},
	}
	for _, tc := range cases {
		require.Equal(t, tc.out, pix.ProRata(tc.total, tc.net, tc.credited), tc.name)
	}
}

// TestParseSplits: the request's rules, each issue naming its field.
func TestParseSplits(t *testing.T) {
	t.Parallel()
	const a, b = "5d7e1c2a-3b4f-4a6e-9c8d-7e6f5a4b3c2d", "6e8f2d3b-4c5a-4b7f-8d9e-8f7a6b5c4d3e"
	got, is := pix.ParseSplits("splits", []pix.SplitRequest{{AccountID: a, Percent: []byte("33.33")}, {AccountID: b, Percent: []byte("66.67")}}, 100)
	require.Empty(t, is)
	require.Equal(t, []pix.Split{{Index: 0, AccountID: a, Percent: 3333}, {Index: 1, AccountID: b, Percent: 6667}}, got)
	_, is = pix.ParseSplits("splits", []pix.SplitRequest{{AccountID: a, Percent: []byte("1e1")}}, 100)
	require.Empty(t, is, "a JSON number in any notation")
	_, is = pix.ParseSplits("splits", []pix.SplitRequest{{AccountID: a, Amount: []byte("1.00")}, {AccountID: b, Amount: []byte("0.01")}}, 100)
	require.Equal(t, []pix.FieldIssue{{Field: "splits", Issue: pix.IssueSplitAmountSum}}, is)
	_, is = pix.ParseSplits("splits", []pix.SplitRequest{{AccountID: a, Percent: []byte("-1")}}, 100)
	require.Equal(t, []pix.FieldIssue{{Field: "splits[0].percent", Issue: pix.IssueSplitPercent}}, is)
}
