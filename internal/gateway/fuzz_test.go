package gateway

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/pix"
)

// FuzzDecodeRequests feeds arbitrary bodies to the charge, payout and refund
// request decoding and validation: whatever arrives, the outcome is a
// domain error of a 4xx kind or a valid request, never a panic and never an
// internal error.
func FuzzDecodeRequests(f *testing.F) {
	for _, seed := range []string{
		`{"amount":10.5,"external_id":"a","payer":{"name":"n","document":"52998224725","phoneNumber":"11987654321","email":"a@b.co","address":{"street":"s","number":"1","neighborhood":"n","city":"c","state":"SP","zipCode":"01001000"}},"payerQuestion":"q","postbackUrl":"https://x.example/h","products":[{"name":"p","quantity":"1","price":10.5}]}`,
		`{"amount":"10","products":[{"price":1e400}]}`,
		`{"amount":1,"description":"d","creditParty":{"name":"n","keyType":"EVP","key":"123e4567-e89b-42d3-a456-426614174000"},"callbackUrl":"https://x.example"}`,
		`{"payment_id":"x","amount":-1}`, `[]`, `null`, `{"payer":null,"products":null}`, `{"amount":1e-7}`,
		`{"amount":10.1,"due":{"date":"2099-12-10","days_after":30,"fine":{"percent":2},"interest":{"percent_per_month":1},"discounts":[{"until":"2099-12-01","percent":5},{"until":"2099-12-05","percent":2.5}]}}`,
		`{"amount":1,"due":{"date":"2099-12-10","discounts":[{"until":"2099-12-10","amount":0.99}],"fine":{"amount":5,"percent":1}}}`,
	} {
		f.Add([]byte(seed))
	}
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		f.Fatal(err)
	}
	s := &Service{Env: "sandbox", Now: time.Now, loc: loc, clocks: &clock.Clients{Real: time.Now, Loc: loc}}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(err error) {
			if err == nil {
				return
			}
			switch pix.ErrorCode(err) {
			case pix.EInvalid, pix.EInvalidKey:
			default:
				t.Fatalf("unexpected error kind for %q: %v", body, err)
			}
		}
		var c ChargeRequest
		if json.NewDecoder(bytes.NewReader(body)).Decode(&c) == nil {
			amount, due, err := s.validateCharge(&c)
			check(err)
			if err == nil && (amount <= 0 || amount > pix.MaxAmount) {
				t.Fatalf("accepted amount %d out of range", amount)
			}
			if err == nil && (due == nil) != (c.Due == nil) {
				t.Fatalf("accepted due terms %v for the due object %v", due, c.Due)
			}
			if err == nil && due != nil {
				if a, ok := due.AmountOn(amount, due.Date); !ok || a <= 0 {
					t.Fatalf("accepted terms that leave %s due on the due date", a)
				}
			}
		}
		var p PayoutRequest
		if json.NewDecoder(bytes.NewReader(body)).Decode(&p) == nil {
			_, err := s.validatePayout(&p, "")
			check(err)
		}
		if _, err := pix.RequestHash("x", body); err == nil {
			// Equal values hash alike however they are spaced.
			spaced := append([]byte(" \n"), body...)
			if h1, _ := pix.RequestHash("x", body); func() string { h2, _ := pix.RequestHash("x", spaced); return h2 }() != h1 {
				t.Fatalf("hash depends on leading white space")
			}
		}
	})
}
