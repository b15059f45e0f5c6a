// Package webhook delivers outbox events to merchants' URLs: Standard Webhooks signatures, retries, attempt log, SSRF-safe dialing.
package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Errors of the SSRF guard; test with errors.Is. All are permanent: a URL
// refused once is refused on every retry.
var (
	// ErrForbiddenDestination means the URL, a redirect target or the address
	// being dialed may not be reached: not a public unicast address (loopback,
	// private, link-local, cloud metadata, …) while private destinations are
	// not allowed; an http URL in production whose host does not resolve only
	// to such addresses; or a name that does not resolve when that must be
	// known at creation.
	ErrForbiddenDestination error = &guardError{msg: "webhook: forbidden destination", destination: true}
	// ErrInvalidURL means the URL is not an absolute http(s) URL with a host
	// and no user info, or is http where https is required.
	ErrInvalidURL error = &guardError{msg: "webhook: invalid webhook URL"}
	// ErrRedirect means a redirect was refused: more than MaxRedirects, or one
	// that would turn the POST into a GET (301/302/303) and drop the body.
	ErrRedirect error = &guardError{msg: "webhook: redirect refused"}
)

// guardError is the type of the guard's sentinel errors. Its
// DestinationNotAllowed method lets packages that may not import this one
// (gateway) tell a refused destination from a malformed URL with errors.As.
type guardError struct {
	msg         string
	destination bool
}

func (e *guardError) Error() string { return e.msg }

// DestinationNotAllowed reports whether the error means the destination may
// not be reached (rather than that the URL is malformed).
func (e *guardError) DestinationNotAllowed() bool { return e.destination }

// MaxRedirects is how many redirects a Guard's client follows per request.
const MaxRedirects = 3

// maxURLLength bounds a webhook URL.
const maxURLLength = 2048

// Guard decides which webhook destinations may be reached. The zero value
// refuses private destinations and accepts http and https.
type Guard struct {
	// AllowPrivate lets URLs and dials reach loopback and private addresses
	// (PIXGATE_WEBHOOK_ALLOW_PRIVATE: true in sandbox, false in production).
	AllowPrivate bool
	// RequireHTTPS refuses http URLs, on the first request and on redirects.
	RequireHTTPS bool
	// Lookup resolves a host name to addresses for DialContext; nil means
	// net.DefaultResolver.LookupNetIP(ctx, "ip", host). Tests map names here.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)

	// allow, when set, accepts an otherwise forbidden address at dial time.
	// Tests use it to treat one loopback server as "public".
	allow func(netip.AddrPort) bool
	// internalOnly makes the dialer accept only hosts whose every address
	// is not public: the dialer of http requests when RequireHTTPS and
	// AllowPrivate (an internal receiver in production).
	internalOnly bool
}

// resolveTimeout bounds the lookup CheckURL makes to decide whether an http
// URL in production points at an internal receiver.
const resolveTimeout = 3 * time.Second

// Special-purpose ranges that are not reachable public unicast destinations,
// beyond what netip.Addr's predicates already cover (loopback, RFC 1918,
// fc00::/7, link-local, multicast, unspecified). From the IANA special-purpose
// address registries.
var nonPublicPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT shared address space
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast (deprecated)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, includes 255.255.255.255 broadcast
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated), ::, ::1
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments, Teredo
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
}

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64: IPv4 in the last 32 bits
	sixTo4 = netip.MustParsePrefix("2002::/16")    // 6to4: IPv4 in bits 16–47
)

// IsPublicIP reports whether ip is a public unicast address that a webhook may
// be sent to. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are judged by their
// IPv4 address, as are NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses by
// the IPv4 address they embed.
func IsPublicIP(ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	ip = ip.WithZone("").Unmap()
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsMulticast() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range nonPublicPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	if nat64.Contains(ip) {
		b := ip.As16()
		return IsPublicIP(netip.AddrFrom4([4]byte(b[12:16])))
	}
	if sixTo4.Contains(ip) {
		b := ip.As16()
		return IsPublicIP(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return true
}

// CheckURL validates a webhook URL when a charge or payout is created. It
// returns an error wrapping ErrInvalidURL unless raw is an absolute http or
// https URL with a host, a valid port and no user info, and an error wrapping
// ErrForbiddenDestination for a destination that may not be reached. The host
// is judged in its ASCII (IDNA) form, the form net/http dials, so that
// "127。0。0。1" is the loopback address it means.
//
// Rules (docs/api.md, Input rules): unless AllowPrivate, localhost names and IP literals
// that are not public are forbidden. With RequireHTTPS (production), http is
// accepted only with AllowPrivate and only for a host that resolves only to
// non-public addresses: IP literals and localhost names are judged as they
// are, other names are resolved here (a name that does not resolve is
// forbidden; one with a public address needs https). Other host names are not
// resolved here: DialContext checks every address at delivery time.
func (g Guard) CheckURL(raw string) error {
	if len(raw) > maxURLLength {
		return fmt.Errorf("%w: longer than %d characters", ErrInvalidURL, maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidURL, errors.Unwrap(err))
	}
	name, err := g.checkURL(u)
	if err != nil || name == "" {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	ips, err := g.lookup(ctx, name)
	if err != nil || len(ips) == 0 {
		// The resolver's error may name internal servers; the caller only
		// needs to know the destination cannot be vouched for.
		return fmt.Errorf("%w: %s does not resolve", ErrForbiddenDestination, name)
	}
	for _, ip := range ips {
		if IsPublicIP(ip) {
			return fmt.Errorf("%w: https is required: %s resolves to the public address %s", ErrInvalidURL, name, ip)
		}
	}
	return nil
}

// checkURL applies the rules of CheckURL that need no DNS; it is also the
// check of every request and redirect target at delivery time. It returns
// the ASCII host name when the URL is http under RequireHTTPS and
// AllowPrivate and the host is a name whose addresses decide (resolved by
// CheckURL at creation, by the internal-only dialer at delivery).
func (g Guard) checkURL(u *url.URL) (resolve string, err error) {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%w: scheme must be http or https", ErrInvalidURL)
	case u.Opaque != "":
		return "", fmt.Errorf("%w: not an absolute URL", ErrInvalidURL)
	case u.User != nil:
		return "", fmt.Errorf("%w: user info is not allowed", ErrInvalidURL)
	}
	host, err := asciiHost(u.Hostname())
	if err != nil {
		return "", err
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("%w: invalid port", ErrInvalidURL)
		}
	}
	// plainHTTP: http where https is required, allowed only to internal hosts.
	plainHTTP := g.RequireHTTPS && u.Scheme == "http"

	if ip, err := netip.ParseAddr(host); err == nil {
		switch {
		case IsPublicIP(ip) && plainHTTP:
			return "", fmt.Errorf("%w: https is required for the public address %s", ErrInvalidURL, ip)
		case !IsPublicIP(ip) && !g.AllowPrivate:
			return "", fmt.Errorf("%w: %s is not a public address", ErrForbiddenDestination, ip)
		}
		return "", nil
	}
	if strings.Contains(host, ":") { // brackets held something that is not an IPv6 address
		return "", fmt.Errorf("%w: invalid IPv6 address", ErrInvalidURL)
	}
	name := strings.TrimSuffix(host, ".")
	if err := checkHostName(name); err != nil {
		return "", err
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") || name == "localhost.localdomain" {
		if !g.AllowPrivate {
			return "", fmt.Errorf("%w: %s", ErrForbiddenDestination, name)
		}
		return "", nil
	}
	if plainHTTP {
		if !g.AllowPrivate {
			return "", fmt.Errorf("%w: https is required", ErrInvalidURL)
		}
		return name, nil
	}
	return "", nil
}

// asciiHost returns host in lower case and, when it is not ASCII, in the
// ASCII form net/http converts it to before dialing (IDNA, lookup profile:
// full-width digits and ideographic full stops become ASCII ones).
func asciiHost(host string) (string, error) {
	if host == "" {
		return "", fmt.Errorf("%w: no host", ErrInvalidURL)
	}
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			a, err := idna.Lookup.ToASCII(host)
			if err != nil || a == "" {
				return "", fmt.Errorf("%w: invalid internationalised host name", ErrInvalidURL)
			}
			return strings.ToLower(a), nil
		}
	}
	return strings.ToLower(host), nil
}

// checkHostName accepts DNS names (letters, digits, "-", "_", and non-ASCII
// for internationalised names) and refuses numeric forms that resolvers may
// read as IPv4 addresses ("2130706433", "0x7f.1", "127.1"): no top-level
// domain is numeric.
func checkHostName(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("%w: invalid host name", ErrInvalidURL)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("%w: invalid host name", ErrInvalidURL)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c >= 0x80) {
				return fmt.Errorf("%w: invalid host name", ErrInvalidURL)
			}
		}
	}
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return fmt.Errorf("%w: numeric host that is not a valid IP address", ErrInvalidURL)
	}
	return nil
}

// permitted reports whether a dial to ap is allowed.
func (g Guard) permitted(ap netip.AddrPort) bool {
	if g.internalOnly {
		return !IsPublicIP(ap.Addr())
	}
	return g.AllowPrivate || IsPublicIP(ap.Addr()) || (g.allow != nil && g.allow(ap))
}

func (g Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if g.Lookup != nil {
		return g.Lookup(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// DialContext returns a dial function for http.Transport that, unless
// AllowPrivate, resolves the host itself, drops every address that is not
// public and dials the remaining ones by IP, so the address checked is the
// address connected to (no DNS rebinding between check and dial). A name with
// no public address fails with ErrForbiddenDestination. The dialer's Control
// hook checks the socket's address once more. d may be nil.
func (g Guard) DialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var dd net.Dialer
	if d != nil {
		dd = *d
	} else {
		dd = net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	}
	if g.AllowPrivate && g.Lookup == nil && !g.internalOnly {
		return dd.DialContext
	}
	if !g.AllowPrivate || g.internalOnly {
		prevCtx, prev := dd.ControlContext, dd.Control
		dd.Control = nil
		dd.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
			if err := g.checkDialAddr(address); err != nil {
				return err
			}
			if prevCtx != nil {
				return prevCtx(ctx, network, address, c)
			}
			if prev != nil {
				return prev(network, address, c)
			}
			return nil
		}
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		switch network {
		case "tcp", "tcp4", "tcp6":
		default:
			return nil, fmt.Errorf("%w: network %q", ErrForbiddenDestination, network)
		}
		host, portText, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("webhook: dial %s: %w", addr, err)
		}
		port, err := strconv.ParseUint(portText, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("webhook: dial %s: invalid port", addr)
		}
		var ips []netip.Addr
		if ip, err := netip.ParseAddr(host); err == nil {
			ips = []netip.Addr{ip}
		} else if ips, err = g.lookup(ctx, host); err != nil {
			return nil, fmt.Errorf("webhook: resolve %s: %w", host, err)
		}

		var candidates []netip.AddrPort
		var refused []string
		for _, ip := range ips {
			ip = ip.Unmap()
			if (network == "tcp4" && !ip.Is4()) || (network == "tcp6" && !ip.Is6()) {
				continue
			}
			ap := netip.AddrPortFrom(ip, uint16(port))
			if g.internalOnly && IsPublicIP(ip) {
				// Plain http may not leave for the internet: a name with any
				// public address is refused as a whole, as at creation.
				return nil, fmt.Errorf("%w: http is allowed only to internal hosts; %s resolves to the public address %s", ErrForbiddenDestination, host, ip)
			}
			if !g.permitted(ap) {
				refused = append(refused, ip.String())
				continue
			}
			candidates = append(candidates, ap)
		}
		if len(candidates) == 0 {
			if len(refused) > 0 {
				return nil, fmt.Errorf("%w: %s resolves to %s", ErrForbiddenDestination, host, strings.Join(refused, ", "))
			}
			return nil, fmt.Errorf("webhook: dial %s: no %s address", addr, network)
		}
		return dialSerial(ctx, &dd, network, candidates)
	}
}

// minAttempt is the least time given to one address when several remain, as
// net.Dialer does for its own fallbacks.
const minAttempt = 2 * time.Second

// dialSerial dials the addresses in order, sharing the dialer's timeout (or the
// context's deadline) between them so that an unreachable first address does
// not use up the whole budget.
func dialSerial(ctx context.Context, d *net.Dialer, network string, addrs []netip.AddrPort) (net.Conn, error) {
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	var firstErr error
	for i, ap := range addrs {
		attemptCtx, cancel := ctx, context.CancelFunc(func() {})
		if deadline, ok := ctx.Deadline(); ok && i < len(addrs)-1 {
			left := time.Until(deadline)
			per := left / time.Duration(len(addrs)-i)
			if per < minAttempt {
				per = min(minAttempt, left)
			}
			attemptCtx, cancel = context.WithTimeout(ctx, per)
		}
		conn, err := d.DialContext(attemptCtx, network, ap.String())
		cancel()
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// checkDialAddr is the Control-time check of the socket address ("ip:port").
func (g Guard) checkDialAddr(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable dial address %q", ErrForbiddenDestination, address)
	}
	if !g.permitted(ap) {
		return fmt.Errorf("%w: %s is not a public address", ErrForbiddenDestination, ap.Addr())
	}
	return nil
}

// Client returns an http.Client for webhook deliveries: requests time out
// after timeout; no proxy is taken from the environment; TLS 1.2 or later;
// every request URL, the first and each redirect target, passes the checks of
// CheckURL that need no DNS; every connection goes through DialContext (http
// under RequireHTTPS through a dialer that reaches only hosts with no public
// address); at most MaxRedirects redirects are followed, and only those
// keeping the method (307, 308), since a 301, 302 or 303 would turn the POST
// into a bodiless GET.
func (g Guard) Client(timeout time.Duration) *http.Client {
	dialTimeout := 10 * time.Second
	if timeout > 0 && timeout < dialTimeout {
		dialTimeout = timeout
	}
	gt := &guardedTransport{guard: g, base: g.transport(dialTimeout)}
	if g.RequireHTTPS && g.AllowPrivate {
		internal := g
		internal.internalOnly = true
		gt.plain = internal.transport(dialTimeout)
	}
	return &http.Client{
		Transport:     gt,
		Timeout:       timeout,
		CheckRedirect: g.checkRedirect,
	}
}

// transport returns an http.Transport dialing through g.
func (g Guard) transport(dialTimeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            g.DialContext(&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}),
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    dialTimeout,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// checkRedirect is the http.Client CheckRedirect hook.
func (g Guard) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("%w: more than %d redirects", ErrRedirect, MaxRedirects)
	}
	if _, err := g.checkURL(req.URL); err != nil {
		return fmt.Errorf("redirect to %s: %w", redactURL(req.URL), err)
	}
	if len(via) > 0 && req.Method != via[0].Method {
		return fmt.Errorf("%w: %s would become %s", ErrRedirect, via[0].Method, req.Method)
	}
	return nil
}

// redactURL drops query and fragment, which may carry merchant tokens, from
// URLs put in error messages.
func redactURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

// guardedTransport runs checkURL on every request before sending it.
type guardedTransport struct {
	guard Guard
	base  *http.Transport
	// plain, when set (RequireHTTPS and AllowPrivate), sends the http
	// requests: its dialer reaches only hosts with no public address.
	plain *http.Transport
}

// RoundTrip implements http.RoundTripper.
func (t *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	_, err := t.guard.checkURL(req.URL)
	if err == nil && req.URL.Scheme == "http" && t.guard.RequireHTTPS && t.plain == nil {
		err = fmt.Errorf("%w: https is required", ErrInvalidURL) // checkURL refuses this already
	}
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // RoundTrip must close the body, even on error
		}
		return nil, err
	}
	if req.URL.Scheme == "http" && t.plain != nil {
		return t.plain.RoundTrip(req)
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections closes idle connections of the underlying transports;
// http.Client.CloseIdleConnections calls it.
func (t *guardedTransport) CloseIdleConnections() {
	t.base.CloseIdleConnections()
	if t.plain != nil {
		t.plain.CloseIdleConnections()
	}
}
