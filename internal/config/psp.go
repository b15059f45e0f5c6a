package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
)

// complain reports one invalid setting, by its variable and its flag.
type complain func(env, flag, format string, args ...any)

// webhookPath matches the path of PIXGATE_PSP_WEBHOOK_URL: anything, then
// /psp/webhook/ and the secret that authenticates the PSP's calls.
var webhookPath = regexp.MustCompile(`/psp/webhook/([A-Za-z0-9_-]{32,})$`)

// validatePSP checks the PIXGATE_PSP_* settings of a real PSP, reporting
// each problem through bad (in the order the settings are documented) and
// filling what serve needs on success.
func (s *Settings) validatePSP(bad complain) {
	s.validatePSPURLs(bad)
	missing(bad, "PIXGATE_PSP_CLIENT_ID", "psp-client-id", s.PSPClientID)
	missing(bad, "PIXGATE_PSP_CLIENT_SECRET", "psp-client-secret", s.PSPClientSecret)
	s.validatePSPCertificate(bad)
	s.validatePSPCA(bad)
	if !missing(bad, "PIXGATE_PSP_PIX_KEY", "psp-pix-key", s.PSPPixKey) && !validPixKey(s.PSPPixKey) {
		bad("PIXGATE_PSP_PIX_KEY", "psp-pix-key", "must be a valid PIX key (e-mail, +55 phone, CPF, CNPJ or EVP)")
	}
	s.validatePSPWebhookURL(bad)
}

// missing reports, through bad, a PSP setting left empty.
func missing(bad complain, env, flag, v string) bool {
	if strings.TrimSpace(v) == "" {
		bad(env, flag, "must be set (required with PIXGATE_PROVIDER=apipix or efi)")
		return true
	}
	return false
}

// validatePSPURLs checks the PSP's API and token URLs; the token URL
// defaults to /oauth/token on the API's host.
func (s *Settings) validatePSPURLs(bad complain) {
	if !missing(bad, "PIXGATE_PSP_API_URL", "psp-api-url", s.PSPAPIURL) {
		if u, ok := httpsURL(s.PSPAPIURL); !ok {
			bad("PIXGATE_PSP_API_URL", "psp-api-url", "must be an absolute https URL without query, such as https://pix.example.com/v2")
		} else if s.PSPTokenURL == "" {
			s.PSPTokenURL = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/oauth/token"}).String()
		}
	}
	if s.PSPTokenURL != "" {
		if _, ok := httpsURL(s.PSPTokenURL); !ok {
			bad("PIXGATE_PSP_TOKEN_URL", "psp-token-url", "must be an absolute https URL without query, such as https://pix.example.com/oauth/token")
		}
	}
}

// validatePSPCertificate reads the client certificate and its key, and
// checks that they are a pair valid now.
func (s *Settings) validatePSPCertificate(bad complain) {
	var certOK, keyOK bool
	if !missing(bad, "PIXGATE_PSP_CERT_FILE", "psp-cert-file", s.PSPCertFile) {
		if b, err := os.ReadFile(s.PSPCertFile); err != nil {
			bad("PIXGATE_PSP_CERT_FILE", "psp-cert-file", "cannot read %s: %v", s.PSPCertFile, readError(err))
		} else if !hasCertificate(b) {
			bad("PIXGATE_PSP_CERT_FILE", "psp-cert-file", "%s holds no PEM certificate", s.PSPCertFile)
		} else {
			s.CertPEM, certOK = b, true
		}
	}
	if !missing(bad, "PIXGATE_PSP_KEY_FILE", "psp-key-file", s.PSPKeyFile) {
		if b, err := os.ReadFile(s.PSPKeyFile); err != nil {
			bad("PIXGATE_PSP_KEY_FILE", "psp-key-file", "cannot read %s: %v", s.PSPKeyFile, readError(err))
		} else if !hasPrivateKey(b) {
			bad("PIXGATE_PSP_KEY_FILE", "psp-key-file", "%s holds no PEM private key (PKCS #1, PKCS #8 or EC)", s.PSPKeyFile)
		} else {
			s.KeyPEM, keyOK = b, true
		}
	}
	if certOK && keyOK {
		s.validatePSPKeyPair(bad)
	}
}

// validatePSPKeyPair checks that the key read is the certificate's and
// that the certificate is valid now, whose expiry it records.
func (s *Settings) validatePSPKeyPair(bad complain) {
	// tls.X509KeyPair's own error is not quoted: it is generic, and the
	// two files are named instead.
	pair, err := tls.X509KeyPair(s.CertPEM, s.KeyPEM)
	if err != nil {
		bad("PIXGATE_PSP_KEY_FILE", "psp-key-file", "%s is not the private key of the certificate in PIXGATE_PSP_CERT_FILE", s.PSPKeyFile)
		s.CertPEM, s.KeyPEM = nil, nil
		return
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return
	}
	// The PSP refuses every call made with a lapsed certificate, and each
	// charge would then fail with 502: refuse to start instead.
	now := time.Now()
	switch {
	case now.After(leaf.NotAfter):
		bad("PIXGATE_PSP_CERT_FILE", "psp-cert-file", "%s expired at %s: renew the certificate with the PSP",
			s.PSPCertFile, leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		bad("PIXGATE_PSP_CERT_FILE", "psp-cert-file", "%s is not valid before %s",
			s.PSPCertFile, leaf.NotBefore.UTC().Format(time.RFC3339))
	default:
		s.CertNotAfter = leaf.NotAfter
	}
}

// validatePSPCA reads the optional CA bundle the PSP's server is checked
// against.
func (s *Settings) validatePSPCA(bad complain) {
	if s.PSPCAFile == "" {
		return
	}
	if b, err := os.ReadFile(s.PSPCAFile); err != nil {
		bad("PIXGATE_PSP_CA_FILE", "psp-ca-file", "cannot read %s: %v", s.PSPCAFile, readError(err))
	} else if !x509.NewCertPool().AppendCertsFromPEM(b) {
		bad("PIXGATE_PSP_CA_FILE", "psp-ca-file", "%s holds no PEM certificate", s.PSPCAFile)
	} else {
		s.CAPEM = b
	}
}

// validatePSPWebhookURL checks the URL the PSP calls and takes from it the
// secret that authenticates those calls.
func (s *Settings) validatePSPWebhookURL(bad complain) {
	if missing(bad, "PIXGATE_PSP_WEBHOOK_URL", "psp-webhook-url", s.PSPWebhookURL) {
		return
	}
	// The secret is never quoted, nor the URL that holds it.
	u, err := url.Parse(s.PSPWebhookURL)
	m := []string(nil)
	if err == nil {
		m = webhookPath.FindStringSubmatch(u.EscapedPath())
	}
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil:
		bad("PIXGATE_PSP_WEBHOOK_URL", "psp-webhook-url", "must be an absolute http(s) URL such as https://pixgate.example.com/psp/webhook/<secret>")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		bad("PIXGATE_PSP_WEBHOOK_URL", "psp-webhook-url", "must have no query or fragment (the PSP appends /pix to it)")
	case m == nil:
		bad("PIXGATE_PSP_WEBHOOK_URL", "psp-webhook-url", "must end in /psp/webhook/<secret>, the secret being 32 or more characters of [A-Za-z0-9_-]")
	case u.Scheme != "https" && s.Env == Production && !loopbackHost(u.Hostname()):
		// Over http the secret that authenticates the PSP's calls would
		// cross the network in clear.
		bad("PIXGATE_PSP_WEBHOOK_URL", "psp-webhook-url", "must be an https URL in production (http only for a loopback host such as 127.0.0.1)")
	default:
		s.PSPWebhookSecret = m[1]
	}
}

// readError is why a file could not be read, without the path that the
// line names already.
func readError(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// httpsURL parses v as an absolute https URL that paths can be appended to.
func httpsURL(v string) (*url.URL, bool) {
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, false
	}
	return u, true
}

// hasCertificate reports whether b holds a PEM certificate that parses.
func hasCertificate(b []byte) bool {
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return false
		}
		if block.Type == "CERTIFICATE" {
			if _, err := x509.ParseCertificate(block.Bytes); err == nil {
				return true
			}
		}
	}
}

// hasPrivateKey reports whether b holds a PEM private key in one of the
// forms crypto/tls reads.
func hasPrivateKey(b []byte) bool {
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return false
		}
		if !strings.HasSuffix(block.Type, "PRIVATE KEY") {
			continue
		}
		if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
			return true
		}
		if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
			return true
		}
		if _, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
			return true
		}
	}
}
