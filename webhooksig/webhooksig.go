// Package webhooksig signs and verifies pixgate webhooks per the Standard
// Webhooks scheme (https://www.standardwebhooks.com).
//
// Every webhook carries three headers:
//
//	webhook-id:        the event id (equal to the body's "id"), the same on every retry
//	webhook-timestamp: Unix seconds at which this attempt was signed
//	webhook-signature: one or more space-separated "v1,<base64 signature>" entries
//
// A v1 signature is the Base64 of HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}")
// where key is the Base64-decoded part after "whsec_" of the webhook secret. During a
// secret rotation pixgate sends one signature per valid secret, so a receiver holding
// either the old or the new secret verifies the message.
//
// Merchants import this package to check deliveries:
//
//	v, err := webhooksig.NewVerifier(os.Getenv("PIXGATE_WEBHOOK_SECRET"))
//	...
//	if err := v.Verify(r.Header, body); err != nil { /* answer 401 */ }
//
// Verification uses the exact bytes of the body as received: decode JSON only
// after Verify succeeds, and never re-encode it before verifying.
package webhooksig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names used by Standard Webhooks. http.Header canonicalises them
// (Webhook-Id, …); Verify accepts both forms.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every pixgate webhook secret; the rest is Base64.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far, either way, a webhook-timestamp may be from the
// receiver's clock. It bounds how long a captured request can be replayed.
const DefaultTolerance = 5 * time.Minute

// Errors returned by this package. Verify wraps them with detail; test with errors.Is.
var (
	// ErrInvalidSecret means a secret is empty or not valid Base64 (after an optional whsec_ prefix).
	ErrInvalidSecret = errors.New("webhooksig: invalid webhook secret")
	// ErrInvalidMessageID means Sign was given an empty message id.
	ErrInvalidMessageID = errors.New("webhooksig: invalid message id")
	// ErrMissingHeaders means webhook-id, webhook-timestamp or webhook-signature is absent or empty.
	ErrMissingHeaders = errors.New("webhooksig: missing webhook headers")
	// ErrInvalidTimestamp means webhook-timestamp is not a whole number of Unix seconds.
	ErrInvalidTimestamp = errors.New("webhooksig: invalid webhook-timestamp")
	// ErrTimestampOutOfTolerance means webhook-timestamp is too old or too far in the future.
	ErrTimestampOutOfTolerance = errors.New("webhooksig: webhook-timestamp outside tolerance")
	// ErrNoMatchingSignature means no v1 entry of webhook-signature matches the message.
	ErrNoMatchingSignature = errors.New("webhooksig: no matching signature")
)

// DecodeSecret returns the HMAC key of a webhook secret: the Base64 decoding of
// the part after "whsec_". A secret without the prefix is decoded whole.
func DecodeSecret(secret string) ([]byte, error) {
	s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(secret), SecretPrefix))
	if s == "" {
		return nil, ErrInvalidSecret
	}
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		// Tolerate secrets copied without their "=" padding.
		key, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	}
	if err != nil || len(key) == 0 {
		return nil, ErrInvalidSecret
	}
	return key, nil
}

// Sign returns the webhook-signature value "v1,<base64>" for one message,
// signed with secret (see DecodeSecret).
func Sign(secret, msgID string, ts time.Time, body []byte) (string, error) {
	return SignAll([]string{secret}, msgID, ts, body)
}

// SignAll signs one message with each secret and returns the signatures
// separated by single spaces, in the order of secrets. pixgate sends this
// during a secret rotation so that receivers holding either secret accept it.
func SignAll(secrets []string, msgID string, ts time.Time, body []byte) (string, error) {
	if len(secrets) == 0 {
		return "", fmt.Errorf("%w: no secret given", ErrInvalidSecret)
	}
	if msgID == "" {
		return "", ErrInvalidMessageID
	}
	tsText := strconv.FormatInt(ts.Unix(), 10)
	sigs := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		key, err := DecodeSecret(secret)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac(key, msgID, tsText, body)))
	}
	return strings.Join(sigs, " "), nil
}

// mac computes HMAC-SHA256(key, "{id}.{ts}.{body}").
func mac(key []byte, msgID, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msgID))
	h.Write([]byte{'.'})
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Verifier checks webhook signatures for one receiver. It is safe for
// concurrent use.
type Verifier struct {
	keys      [][]byte
	tolerance time.Duration
	now       func() time.Time
}

// Option configures a Verifier.
type Option func(*options)

type options struct {
	tolerance time.Duration
	now       func() time.Time
	extra     []string
}

// WithTolerance sets how far, either way, webhook-timestamp may be from now
// (default DefaultTolerance). It must be positive.
func WithTolerance(d time.Duration) Option {
	return func(o *options) { o.tolerance = d }
}

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

// WithAdditionalSecrets makes the Verifier also accept signatures made with
// these secrets, e.g. the previous secret while a rotation propagates through
// the receiver's own configuration.
func WithAdditionalSecrets(secrets ...string) Option {
	return func(o *options) { o.extra = append(o.extra, secrets...) }
}

// NewVerifier returns a Verifier for secret ("whsec_…"). It fails with
// ErrInvalidSecret if a secret cannot be decoded.
func NewVerifier(secret string, opts ...Option) (*Verifier, error) {
	o := options{tolerance: DefaultTolerance, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	if o.tolerance <= 0 {
		return nil, errors.New("webhooksig: tolerance must be positive")
	}
	if o.now == nil {
		return nil, errors.New("webhooksig: clock must not be nil")
	}
	v := &Verifier{tolerance: o.tolerance, now: o.now}
	for _, s := range append([]string{secret}, o.extra...) {
		key, err := DecodeSecret(s)
		if err != nil {
			return nil, err
		}
		v.keys = append(v.keys, key)
	}
	return v, nil
}

// maxTimestampLen bounds webhook-timestamp: Unix seconds need at most 19 digits.
const maxTimestampLen = 19

// Verify checks the Standard Webhooks headers in h against body, the raw
// request body. It returns nil if webhook-timestamp is within the tolerance and
// at least one "v1," entry of webhook-signature matches; entries of other
// versions are ignored. Errors wrap ErrMissingHeaders, ErrInvalidTimestamp,
// ErrTimestampOutOfTolerance or ErrNoMatchingSignature.
//
// Verify does not detect replays within the tolerance; receivers dedupe on
// webhook-id (delivery is at least once anyway).
func (v *Verifier) Verify(h http.Header, body []byte) error {
	id, tsText, sigHeader := header(h, HeaderID), header(h, HeaderTimestamp), header(h, HeaderSignature)
	var missing []string
	for _, p := range [...]struct{ name, value string }{{HeaderID, id}, {HeaderTimestamp, tsText}, {HeaderSignature, sigHeader}} {
		if p.value == "" {
			missing = append(missing, p.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s", ErrMissingHeaders, strings.Join(missing, ", "))
	}

	ts, err := parseTimestamp(tsText)
	if err != nil {
		return err
	}
	now := v.now()
	if d := now.Sub(ts); d > v.tolerance || d < -v.tolerance {
		return fmt.Errorf("%w: %s is %s from now", ErrTimestampOutOfTolerance, tsText, d.Truncate(time.Second))
	}

	var expected [][]byte
	for _, key := range v.keys {
		expected = append(expected, mac(key, id, tsText, body))
	}
	for _, entry := range strings.Fields(sigHeader) {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err != nil {
			continue
		}
		for _, want := range expected {
			if hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return ErrNoMatchingSignature
}

// header reads name from h in canonical form, falling back to the exact
// lower-case key for header maps not built by net/http.
func header(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return strings.TrimSpace(v)
	}
	if vs := h[name]; len(vs) > 0 {
		return strings.TrimSpace(vs[0])
	}
	return ""
}

// parseTimestamp reads decimal Unix seconds: digits only, no sign, no fraction.
func parseTimestamp(s string) (time.Time, error) {
	if len(s) > maxTimestampLen {
		return time.Time{}, fmt.Errorf("%w: too long", ErrInvalidTimestamp)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return time.Time{}, fmt.Errorf("%w: not Unix seconds", ErrInvalidTimestamp)
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: out of range", ErrInvalidTimestamp)
	}
	return time.Unix(n, 0), nil
}
