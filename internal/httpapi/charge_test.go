package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	zxingqr "github.com/makiuchi-d/gozxing/qrcode"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/brcode"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func decodePNG(t *testing.T, b64 string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err, "plain Base64, no data: prefix")
	img, err := png.Decode(bytes.NewReader(raw))
	require.NoError(t, err)
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(t, err)
	res, err := zxingqr.NewQRCodeReader().Decode(bmp, nil)
	require.NoError(t, err)
	return res.GetText()
}

func TestCreateCharge(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		before := b.clock.Now()
		r := b.createCharge("order-1", "1234.5")
		j := r.json
		require.Regexp(t, uuidV4, j["payment_id"])
		require.Equal(t, "order-1", j["external_id"])
		require.Equal(t, json.Number("1234.5"), j["amount"])
		require.Equal(t, "PENDING", j["status"])
		require.Empty(t, r.header.Get("Idempotent-Replayed"))
		exp, err := time.Parse(pix.TimeFormat, j["expires_at"].(string))
		require.NoError(t, err)
		require.WithinDuration(t, before.Add(24*time.Hour), exp, 5*time.Second)

		code := j["qrcode"].(string)
		parsed, err := brcode.Parse(code)
		require.NoError(t, err, "a valid BR Code with a correct CRC")
		p, err := parsed.Payload()
		require.NoError(t, err)
		require.Equal(t, int64(123450), p.Amount)
		require.Equal(t, "pix@pixgate.dev", p.Key)
		require.Equal(t, "Loja Exemplo Ltda", p.MerchantName)
		require.Equal(t, "Sao Paulo", p.MerchantCity, "accents stripped")
		require.Regexp(t, `^[A-Za-z0-9]{25}$`, p.TxID)
		require.Equal(t, code, decodePNG(t, j["qrcode_image"].(string)), "the PNG encodes exactly the BR Code")

		// Each charge has its own txid.
		other := b.createCharge("order-2", "1")
		p2, err := brcode.Parse(other.json["qrcode"].(string))
		require.NoError(t, err)
		pp2, _ := p2.Payload()
		require.NotEqual(t, p.TxID, pp2.TxID)

		// Lookup shows it PENDING, with no confirmation date.
		l := b.do("POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": j["payment_id"]})
		require.Equal(t, http.StatusOK, l.status)
		data := l.json["data"].(map[string]any)
		require.Equal(t, "PENDING", data["status"])
		require.Nil(t, data["confirmed_date"])
		require.Equal(t, "cashin", data["type"])
	})
}

func TestChargeIdempotency(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		first := b.createCharge("idem-1", "10.5")
		// The same JSON value — other key order, other spelling of the number — replays.
		body := validCharge("idem-1", "10.50")
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		spaced := "  \n" + string(raw)
		again := b.do("POST", "/api/v1/gateway/request-qrcode", spaced)
		require.Equal(t, http.StatusCreated, again.status)
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.Equal(t, string(first.body), string(again.body), "same status, same body")

		// Paying it does not change what a replay shows.
		_ = b.do("POST", "/api/v1/sandbox/charges/"+first.json["payment_id"].(string)+"/pay", nil)
		again = b.do("POST", "/api/v1/gateway/request-qrcode", validCharge("idem-1", "10.5"))
		require.Equal(t, string(first.body), string(again.body))

		changed := validCharge("idem-1", "11")
		r := b.do("POST", "/api/v1/gateway/request-qrcode", changed)
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.JSONEq(t, `{"statusCode":422,"message":"external_id already used with different parameters","error":"Unprocessable Entity"}`, string(r.body))
		require.Equal(t, 1, b.count(b.cred.ClientID))

		// Another client may use the same external_id.
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		r = b.do("POST", "/api/v1/gateway/request-qrcode", validCharge("idem-1", "10.5"), other)
		require.Equal(t, http.StatusCreated, r.status)
		require.NotEqual(t, first.json["payment_id"], r.json["payment_id"])
	})
}

func TestConcurrentDuplicateCharges(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		var wg sync.WaitGroup
		resps := make([]response, 20)
		errs := make([]error, len(resps))
		for i := range resps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resps[i], errs[i] = b.attempt("POST", "/api/v1/gateway/request-qrcode", validCharge("dup", "99.99"), "")
			}()
		}
		wg.Wait()
		ids := make([]string, len(resps))
		replays := make([]string, len(resps))
		created := ""
		for i, r := range resps {
			require.NoError(t, errs[i])
			if r.status == http.StatusCreated {
				ids[i] = r.json["payment_id"].(string)
				replays[i] = r.header.Get("Idempotent-Replayed")
				created = ids[i]
			} else {
				require.Equal(t, http.StatusConflict, r.status, string(r.body))
			}
		}
		require.Equal(t, 1, b.count(b.cred.ClientID), "exactly one transaction")
		fresh := 0
		for i, id := range ids {
			if id != "" {
				require.Equal(t, created, id)
				if replays[i] == "" {
					fresh++
				}
			}
		}
		require.Equal(t, 1, fresh, "one creation, the others replays")
	})
}

func TestChargeValidation(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		set := func(path []string, v any) map[string]any {
			body := validCharge("v-1", "10")
			m := body
			for _, k := range path[:len(path)-1] {
				m = m[k].(map[string]any)
			}
			if v == nil {
				delete(m, path[len(path)-1])
			} else {
				m[path[len(path)-1]] = v
			}
			return body
		}
		product := func(name, qty string, price any) map[string]any {
			body := validCharge("v-1", "10")
			body["products"] = []any{map[string]any{"name": name, "quantity": qty, "price": price}}
			return body
		}
		for _, tc := range []struct {
			field string
			body  map[string]any
		}{
			{"amount", set([]string{"amount"}, nil)},
			{"amount", set([]string{"amount"}, json.Number("0"))},
			{"amount", set([]string{"amount"}, json.Number("-1"))},
			{"amount", set([]string{"amount"}, json.Number("10.001"))},
			{"amount", set([]string{"amount"}, json.Number("1000000.01"))},
			{"amount", set([]string{"amount"}, "10")},
			{"external_id", set([]string{"external_id"}, nil)},
			{"external_id", set([]string{"external_id"}, "has space")},
			{"external_id", set([]string{"external_id"}, string(bytes.Repeat([]byte("a"), 65)))},
			{"payer", set([]string{"payer"}, nil)},
			{"payer.name", set([]string{"payer", "name"}, "")},
			{"payer.document", set([]string{"payer", "document"}, "52998224724")},
			{"payer.document", set([]string{"payer", "document"}, "529.982.247-25")},
			{"payer.document", set([]string{"payer", "document"}, "11222333000182")},
			{"payer.document", set([]string{"payer", "document"}, "11111111111")},
			{"payer.phoneNumber", set([]string{"payer", "phoneNumber"}, "12345")},
			{"payer.email", set([]string{"payer", "email"}, "not-an-email")},
			{"payer.address", set([]string{"payer", "address"}, nil)},
			{"payer.address.street", set([]string{"payer", "address", "street"}, "")},
			{"payer.address.number", set([]string{"payer", "address", "number"}, nil)},
			{"payer.address.neighborhood", set([]string{"payer", "address", "neighborhood"}, "")},
			{"payer.address.city", set([]string{"payer", "address", "city"}, "")},
			{"payer.address.state", set([]string{"payer", "address", "state"}, "XX")},
			{"payer.address.zipCode", set([]string{"payer", "address", "zipCode"}, "01001-000")},
			{"payer.address.zipCode", set([]string{"payer", "address", "zipCode"}, "0100100")},
			{"payerQuestion", set([]string{"payerQuestion"}, nil)},
			{"postbackUrl", set([]string{"postbackUrl"}, "not a url")},
			{"postbackUrl", set([]string{"postbackUrl"}, "ftp://example.com/x")},
			{"products", set([]string{"products"}, nil)},
			{"products", set([]string{"products"}, []any{})},
			{"products[0].name", product("", "1", json.Number("1"))},
			{"products[0].quantity", product("X", "1.5", json.Number("1"))},
			{"products[0].quantity", product("X", "0", json.Number("1"))},
			{"products[0].price", product("X", "1", json.Number("0"))},
			{"products[0].price", product("X", "1", "1.00")},
		} {
			r := b.do("POST", "/api/v1/gateway/request-qrcode", tc.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", tc.field, r.body)
			require.Equal(t, "Invalid request parameters", r.json["message"])
			require.Equal(t, "Bad Request", r.json["error"])
			details, _ := r.json["details"].([]any)
			require.NotEmpty(t, details, tc.field)
			require.Equal(t, tc.field, details[0].(map[string]any)["field"], "%s: %s", tc.field, r.body)
		}
		// A wrong JSON type is a 400 naming the field, not a 500.
		r := b.do("POST", "/api/v1/gateway/request-qrcode", set([]string{"payer", "name"}, 123))
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Contains(t, string(r.body), "payer.name")
		require.Equal(t, 0, b.count(b.cred.ClientID), "no invalid request stored anything")
		// Boundaries that are valid.
		for i, amount := range []string{"0.01", "1000000", "1000000.00", "7"} {
			b.createCharge(fmt.Sprint("ok-", i), amount)
		}
		cnpj := validCharge("cnpj", "5")
		cnpj["payer"].(map[string]any)["document"] = "11222333000181"
		cnpj["payer"].(map[string]any)["phoneNumber"] = "+551133334444"
		require.Equal(t, http.StatusCreated, b.do("POST", "/api/v1/gateway/request-qrcode", cnpj).status)
	})
}

func TestChargeIdempotencyKeyHeader(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		send := func(ext, key string) response {
			return b.doKey("/api/v1/gateway/request-qrcode", validCharge(ext, "5"), key)
		}
		first := send("k-1", "key-A")
		require.Equal(t, http.StatusCreated, first.status)
		again := send("k-1", "key-A")
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.Equal(t, string(first.body), string(again.body))
		other := send("k-2", "key-A")
		require.Equal(t, http.StatusUnprocessableEntity, other.status, "the key is bound to its first body")
		require.Equal(t, 1, b.count(b.cred.ClientID))
	})
}
