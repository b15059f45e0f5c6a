package webhooksig

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The Standard Webhooks reference test vector.
const (
	vecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTS     = 1614265330
	vecBody   = `{"test": 2432232314}`
	vecSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

var vecTime = time.Unix(vecTS, 0)

// otherSecret is a second valid secret, as after a rotation.
const otherSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"

func headers(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderSignature, sig)
	return h
}

func verifierAt(t *testing.T, now time.Time, secret string, opts ...Option) *Verifier {
	t.Helper()
	v, err := NewVerifier(secret, append([]Option{WithClock(func() time.Time { return now })}, opts...)...)
	require.NoError(t, err)
	return v
}

func TestSignVector(t *testing.T) {
	t.Parallel()
	sig, err := Sign(vecSecret, vecID, vecTime, []byte(vecBody))
	require.NoError(t, err)
	require.Equal(t, vecSig, sig)

	// Without the prefix, and with sub-second time (truncated to Unix seconds).
	sig, err = Sign(strings.TrimPrefix(vecSecret, SecretPrefix), vecID, vecTime.Add(999*time.Millisecond), []byte(vecBody))
	require.NoError(t, err)
	require.Equal(t, vecSig, sig)

	require.NoError(t, verifierAt(t, vecTime, vecSecret).Verify(headers(vecID, vecTS, vecSig), []byte(vecBody)))
}

func TestSignErrors(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{"", "whsec_", "whsec_!!!notbase64", "   "} {
		_, err := Sign(secret, vecID, vecTime, []byte(vecBody))
		require.ErrorIs(t, err, ErrInvalidSecret, "secret %q", secret)
		_, err = NewVerifier(secret)
		require.ErrorIs(t, err, ErrInvalidSecret, "secret %q", secret)
	}
	_, err := Sign(vecSecret, "", vecTime, []byte(vecBody))
	require.ErrorIs(t, err, ErrInvalidMessageID)
	_, err = SignAll(nil, vecID, vecTime, []byte(vecBody))
	require.ErrorIs(t, err, ErrInvalidSecret)
	_, err = SignAll([]string{vecSecret, "bad!"}, vecID, vecTime, []byte(vecBody))
	require.ErrorIs(t, err, ErrInvalidSecret)
}

func TestDecodeSecretUnpadded(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdefghijklmnopqrstu") // 31 bytes: padded encoding ends in "="
	padded := base64.StdEncoding.EncodeToString(key)
	require.True(t, strings.HasSuffix(padded, "="))
	for _, s := range []string{SecretPrefix + padded, padded, SecretPrefix + strings.TrimRight(padded, "=")} {
		got, err := DecodeSecret(s)
		require.NoError(t, err, s)
		require.Equal(t, key, got)
	}
}

func TestRoundTripAndTampering(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"id":"evt_1","event":"pix.cashin.paid","value":10.5}`)
	sig, err := Sign(otherSecret, "evt_1", now, body)
	require.NoError(t, err)
	v := verifierAt(t, now, otherSecret)

	require.NoError(t, v.Verify(headers("evt_1", now.Unix(), sig), body))

	tests := map[string]struct {
		h    http.Header
		body []byte
	}{
		"tampered body":      {headers("evt_1", now.Unix(), sig), []byte(`{"id":"evt_1","event":"pix.cashin.paid","value":99.5}`)},
		"body with newline":  {headers("evt_1", now.Unix(), sig), append(append([]byte{}, body...), '\n')},
		"tampered id":        {headers("evt_2", now.Unix(), sig), body},
		"tampered timestamp": {headers("evt_1", now.Unix()+1, sig), body},
		"other secret":       {headers("evt_1", now.Unix(), vecSig), body},
		"unknown version":    {headers("evt_1", now.Unix(), "v2,"+strings.TrimPrefix(sig, "v1,")), body},
		"no version":         {headers("evt_1", now.Unix(), strings.TrimPrefix(sig, "v1,")), body},
		"bad base64":         {headers("evt_1", now.Unix(), "v1,%%%"), body},
		"truncated sig":      {headers("evt_1", now.Unix(), sig[:len(sig)-4]), body},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.ErrorIs(t, v.Verify(tc.h, tc.body), ErrNoMatchingSignature)
		})
	}
}

func TestSignAllRotation(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"id":"evt_rot"}`)
	all, err := SignAll([]string{otherSecret, vecSecret}, "evt_rot", now, body)
	require.NoError(t, err)

	parts := strings.Split(all, " ")
	require.Len(t, parts, 2)
	newSig, err := Sign(otherSecret, "evt_rot", now, body)
	require.NoError(t, err)
	oldSig, err := Sign(vecSecret, "evt_rot", now, body)
	require.NoError(t, err)
	require.Equal(t, []string{newSig, oldSig}, parts)

	for _, secret := range []string{otherSecret, vecSecret} {
		require.NoError(t, verifierAt(t, now, secret).Verify(headers("evt_rot", now.Unix(), all), body))
	}
	// A receiver holding a third secret rejects it.
	third := SecretPrefix + base64.StdEncoding.EncodeToString([]byte("a completely different key!!"))
	require.ErrorIs(t, verifierAt(t, now, third).Verify(headers("evt_rot", now.Unix(), all), body), ErrNoMatchingSignature)
	// A receiver configured with both secrets accepts a message signed with either.
	both := verifierAt(t, now, third, WithAdditionalSecrets(vecSecret))
	require.NoError(t, both.Verify(headers("evt_rot", now.Unix(), oldSig), body))

	// Unknown versions and extra white space around entries are ignored.
	mixed := "v0,AAAA  v2,whatever\t" + oldSig + " "
	require.NoError(t, verifierAt(t, now, vecSecret).Verify(headers("evt_rot", now.Unix(), mixed), body))
}

func TestToleranceEdges(t *testing.T) {
	t.Parallel()
	ts := time.Unix(vecTS, 0)
	sig := vecSig
	tests := []struct {
		name string
		now  time.Time
		opts []Option
		want error
	}{
		{"exact", ts, nil, nil},
		{"5m late", ts.Add(5 * time.Minute), nil, nil},
		{"5m early", ts.Add(-5 * time.Minute), nil, nil},
		{"5m+1ns late", ts.Add(5*time.Minute + time.Nanosecond), nil, ErrTimestampOutOfTolerance},
		{"5m1s late", ts.Add(5*time.Minute + time.Second), nil, ErrTimestampOutOfTolerance},
		{"5m1s early", ts.Add(-5*time.Minute - time.Second), nil, ErrTimestampOutOfTolerance},
		{"a day late", ts.Add(24 * time.Hour), nil, ErrTimestampOutOfTolerance},
		{"custom 1m ok", ts.Add(time.Minute), []Option{WithTolerance(time.Minute)}, nil},
		{"custom 1m late", ts.Add(time.Minute + time.Second), []Option{WithTolerance(time.Minute)}, ErrTimestampOutOfTolerance},
		{"custom 1h", ts.Add(-59 * time.Minute), []Option{WithTolerance(time.Hour)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := verifierAt(t, tc.now, vecSecret, tc.opts...).Verify(headers(vecID, vecTS, sig), []byte(vecBody))
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	_, err := NewVerifier(vecSecret, WithTolerance(0))
	require.Error(t, err)
	_, err = NewVerifier(vecSecret, WithTolerance(-time.Second))
	require.Error(t, err)
	_, err = NewVerifier(vecSecret, WithClock(nil))
	require.Error(t, err)
	_, err = NewVerifier(vecSecret, WithAdditionalSecrets("not base64!"))
	require.ErrorIs(t, err, ErrInvalidSecret)
}

func TestMalformedHeaders(t *testing.T) {
	t.Parallel()
	v := verifierAt(t, vecTime, vecSecret)
	body := []byte(vecBody)
	good := func() http.Header { return headers(vecID, vecTS, vecSig) }
	without := func(name string) http.Header { h := good(); h.Del(name); return h }
	with := func(name, value string) http.Header { h := good(); h.Set(name, value); return h }

	tests := []struct {
		name string
		h    http.Header
		want error
	}{
		{"no headers", http.Header{}, ErrMissingHeaders},
		{"nil headers", nil, ErrMissingHeaders},
		{"no id", without(HeaderID), ErrMissingHeaders},
		{"no timestamp", without(HeaderTimestamp), ErrMissingHeaders},
		{"no signature", without(HeaderSignature), ErrMissingHeaders},
		{"blank signature", with(HeaderSignature, "   "), ErrMissingHeaders},
		{"empty id", with(HeaderID, ""), ErrMissingHeaders},
		{"timestamp not a number", with(HeaderTimestamp, "yesterday"), ErrInvalidTimestamp},
		{"timestamp with fraction", with(HeaderTimestamp, "1614265330.5"), ErrInvalidTimestamp},
		{"timestamp negative", with(HeaderTimestamp, "-1614265330"), ErrInvalidTimestamp},
		{"timestamp with sign", with(HeaderTimestamp, "+1614265330"), ErrInvalidTimestamp},
		{"timestamp in ms", with(HeaderTimestamp, "1614265330000"), ErrTimestampOutOfTolerance},
		{"timestamp overflow", with(HeaderTimestamp, "9999999999999999999"), ErrInvalidTimestamp},
		{"timestamp too long", with(HeaderTimestamp, strings.Repeat("1", 40)), ErrInvalidTimestamp},
		{"timestamp hex", with(HeaderTimestamp, "0x603a1c72"), ErrInvalidTimestamp},
		{"signature garbage", with(HeaderSignature, "garbage"), ErrNoMatchingSignature},
		{"signature only comma", with(HeaderSignature, ","), ErrNoMatchingSignature},
		{"signature v1 empty", with(HeaderSignature, "v1,"), ErrNoMatchingSignature},
		{"signature upper-case version", with(HeaderSignature, "V1,"+strings.TrimPrefix(vecSig, "v1,")), ErrNoMatchingSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.ErrorIs(t, v.Verify(tc.h, body), tc.want)
		})
	}
}

func TestLowerCaseHeaderMap(t *testing.T) {
	t.Parallel()
	// A header map built by hand (not through Set) keeps lower-case keys.
	h := http.Header{
		HeaderID:        {vecID},
		HeaderTimestamp: {strconv.Itoa(vecTS)},
		HeaderSignature: {vecSig},
	}
	require.NoError(t, verifierAt(t, vecTime, vecSecret).Verify(h, []byte(vecBody)))
}

func TestDistinctErrors(t *testing.T) {
	t.Parallel()
	errs := []error{ErrInvalidSecret, ErrInvalidMessageID, ErrMissingHeaders, ErrInvalidTimestamp, ErrTimestampOutOfTolerance, ErrNoMatchingSignature}
	for i, a := range errs {
		for j, b := range errs {
			if i != j {
				require.NotErrorIs(t, a, b)
			}
		}
	}
}
