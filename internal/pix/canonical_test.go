package pix

import (
	"bytes"
	"encoding/json"
	"math/big"
	"testing"
)

// marshalCanonical is the canonical text as RequestHash first defined it:
// json.Marshal of the decoded value with numbers rewritten as exact
// rationals. appendCanonical must write exactly these bytes, or digests
// stored with earlier transactions would stop matching their replays.
func marshalCanonical(t testing.TB, body []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	var norm func(v any) any
	norm = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = norm(e)
			}
		case []any:
			for i, e := range x {
				x[i] = norm(e)
			}
		case json.Number:
			if len(x) > 64 {
				return "n:" + string(x)
			}
			r, ok := new(big.Rat).SetString(string(x))
			if !ok {
				return "n:" + string(x)
			}
			return "n:" + r.RatString()
		}
		return v
	}
	out, err := json.Marshal(norm(v))
	if err != nil {
		t.Fatalf("marshal %q: %v", body, err)
	}
	return out, true
}

var canonicalSeeds = []string{
	`{"amount":10.5,"external_id":"a","payer":{"name":"Jos\u00e9 <&>","city":"São Paulo"},"products":[{"price":10.50,"q":"1"}]}`,
	`{"b":1,"a":[true,false,null,-0,0,-12,1e3,1E-2,0.1,123456789012345678901234567890]}`,
	`{"s":"tab\there \"q\" back\\slash \u0001 \u001f \u007f \u2028 \u2029 \ud800 é"}`,
	"{\"raw\":\"\xff\xfe invalid \xc3\"}",
	`{"z":{},"y":[],"x":"","\u00e9":"key order by bytes","A":"upper","a":"lower"}`,
	`[1,2,{"n":-1.5e-300}]`, `"just a string <b>"`, `12.00`, `-0.0`, `-1.50`, `0.000`, `100.10`, `999999999999999999.9`, `null`, `true`,
	`{"long":1234567890123456789012345678901234567890123456789012345678901234567890e5}`,
	`{"dup":1,"dup":2}`, `{"amount":"10.50"}`,
}

// checkCanonical fails t unless appendCanonical writes, for the value body
// decodes to, what marshalCanonical writes. Bodies that do not decode pass.
func checkCanonical(t *testing.T, body []byte) {
	t.Helper()
	want, ok := marshalCanonical(t, body)
	if !ok {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if got := appendCanonical(nil, v); !bytes.Equal(got, want) {
		t.Fatalf("canonical text of %q:\n got %s\nwant %s", body, got, want)
	}
}

// TestCanonicalMatchesMarshal pins appendCanonical to json.Marshal's bytes
// on the cases where a faster path could diverge: HTML characters, control
// characters, invalid UTF-8, U+2028/U+2029, -0, exponents, long numbers.
func TestCanonicalMatchesMarshal(t *testing.T) {
	for _, body := range canonicalSeeds {
		if _, ok := marshalCanonical(t, []byte(body)); !ok {
			t.Fatalf("seed %q does not decode", body)
		}
		checkCanonical(t, []byte(body))
	}
}

// FuzzCanonical compares appendCanonical with json.Marshal on arbitrary
// bodies.
func FuzzCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkCanonical)
}

// BenchmarkRequestHash is the digest of a charge body like the load
// generator's.
func BenchmarkRequestHash(b *testing.B) {
	body := []byte(`{"amount":"123.45","external_id":"bench-1234567","payer":{"name":"Maria Souza","document":"52998224725","phoneNumber":"11987654321","email":"maria@example.com","address":{"street":"Rua das Flores","number":"100","neighborhood":"Centro","city":"São Paulo","state":"SP","zipCode":"01001000"}},"payerQuestion":"Pedido bench-1234567","postbackUrl":"http://127.0.0.1:40000/hook","products":[{"name":"Produto de teste","quantity":"1","price":"123.45"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := RequestHash("charge", body); err != nil {
			b.Fatal(err)
		}
	}
}
