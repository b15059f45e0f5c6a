package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
)

// Classes of failed attempts: the only texts an attempt's error holds, as the
// deliveries endpoint and the panel show them. A transport error's own text
// can name internal servers ("lookup x on 10.0.0.2:53: no such host"), so it
// goes to the server log only (see Dispatcher.deliver).
const (
	ClassDNS             = "DNS resolution failed"
	ClassRefused         = "connection refused"
	ClassReset           = "connection reset"
	ClassTimeout         = "timeout"
	ClassTLS             = "TLS error"
	ClassNotAllowed      = "destination not allowed"
	ClassRedirect        = "redirect refused"
	ClassInvalidResponse = "invalid response"
	ClassConnection      = "connection failed"
	ClassHTTP3xx         = "HTTP 3xx"
	ClassHTTP4xx         = "HTTP 4xx"
	ClassHTTP5xx         = "HTTP 5xx"
	ClassSecret          = "signing secret unavailable"
	ClassSigning         = "signing failed"
)

// classifyStatus returns the class of a receiver's non-2xx answer ("" for 2xx).
func classifyStatus(code int) string {
	switch {
	case code >= 200 && code < 300:
		return ""
	case code >= 500:
		return ClassHTTP5xx
	case code >= 400:
		return ClassHTTP4xx
	case code >= 300:
		return ClassHTTP3xx
	}
	return ClassInvalidResponse
}

// classify returns the class of an error returned by the delivery client.
// The order matters: a refusal by the guard or a resolver failure is reported
// as such even when it happened during a timeout-bounded dial.
func classify(err error) string {
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		recErr  tls.RecordHeaderError
		alert   tls.AlertError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		netErr  net.Error
	)
	switch {
	case errors.Is(err, ErrForbiddenDestination), errors.Is(err, ErrInvalidURL):
		return ClassNotAllowed
	case errors.Is(err, ErrRedirect):
		return ClassRedirect
	case errors.As(err, &dnsErr):
		return ClassDNS
	case errors.As(err, &certErr), errors.As(err, &recErr), errors.As(err, &alert),
		errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid):
		return ClassTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ClassTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ClassReset
	}
	// net/http reports a malformed answer with untyped errors.
	if msg := err.Error(); strings.Contains(msg, "malformed HTTP") || strings.Contains(msg, "server response headers exceeded") {
		return ClassInvalidResponse
	}
	if strings.Contains(err.Error(), "tls: ") {
		return ClassTLS
	}
	return ClassConnection
}

// logDetail returns an error's text for the server log without the request
// URL, whose query may carry a merchant's token: url.Error's text starts with
// the method and the whole URL.
func logDetail(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}
