package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
)

// RequestHash returns a digest of a JSON request body that ignores key
// order, white space and the spelling of numbers (10.5 and 10.50 are the
// same value), scoped by kind so equal bodies sent to different endpoints
// never match. Idempotency compares these digests.
func RequestHash(kind string, body []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("request hash: %w", err)
	}
	canon, err := json.Marshal(normalize(v))
	if err != nil {
		return "", fmt.Errorf("request hash: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// normalize rewrites numbers as exact rationals so that equal values spell
// alike; encoding/json sorts map keys.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
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
