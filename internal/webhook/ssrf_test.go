package webhook

// These tests send traffic only to loopback servers. Public addresses appear
// only in the IsPublicIP and CheckURL tables, which dial nothing, and every
// Guard under test gets a Lookup that knows a few names and never asks DNS.

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestIsPublicIP(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		// IPv4 non-public
		"127.0.0.1":       false,
		"127.255.255.254": false,
		"10.0.0.1":        false,
		"10.255.255.255":  false,
		"172.16.0.1":      false,
		"172.31.255.255":  false,
		"192.168.1.1":     false,
		"169.254.169.254": false, // cloud metadata
		"169.254.0.1":     false,
		"0.0.0.0":         false,
		"0.1.2.3":         false,
		"100.64.0.1":      false, // CGNAT
		"100.127.255.255": false,
		"192.0.0.1":       false,
		"192.0.2.10":      false,
		"198.18.0.1":      false, // benchmarking
		"198.19.255.255":  false,
		"198.51.100.1":    false,
		"203.0.113.9":     false,
		"224.0.0.1":       false, // multicast
		"239.255.255.250": false,
		"240.0.0.1":       false,
		"255.255.255.255": false, // broadcast
		// IPv4 public, including neighbours of the blocked ranges
		"8.8.8.8":         true,
		"1.1.1.1":         true,
		"172.15.255.255":  true,
		"172.32.0.1":      true,
		"100.63.255.255":  true,
		"100.128.0.1":     true,
		"198.17.255.255":  true,
		"198.20.0.1":      true,
		"169.253.255.255": true,
		"11.0.0.1":        true,
		"223.255.255.254": true,
		// IPv6 non-public
		"::1":                      false,
		"::":                       false,
		"fe80::1":                  false,
		"fe80::1%eth0":             false,
		"fc00::1":                  false,
		"fd00:ec2::254":            false, // AWS metadata over IPv6
		"fec0::1":                  false,
		"ff02::1":                  false,
		"ff05::2":                  false,
		"2001:db8::1":              false,
		"100::1":                   false,
		"2001::1":                  false, // Teredo
		"::127.0.0.1":              false, // IPv4-compatible
		"::ffff:127.0.0.1":         false, // IPv4-mapped forms are judged as IPv4
		"::ffff:10.0.0.1":          false,
		"::ffff:169.254.169.254":   false,
		"::ffff:100.64.0.1":        false,
		"::ffff:0.0.0.0":           false,
		"::ffff:0:127.0.0.1":       false, // IPv4-translated
		"64:ff9b::7f00:1":          false, // NAT64 of 127.0.0.1
		"64:ff9b::a9fe:a9fe":       false, // NAT64 of 169.254.169.254
		"64:ff9b:1::1":             false,
		"2002:7f00:1::1":           false, // 6to4 of 127.0.0.1
		"2002:c0a8:101::1":         false, // 6to4 of 192.168.1.1
		"::ffff:8.8.8.8":           true,
		"64:ff9b::808:808":         true,
		"2002:808:808::1":          true,
		"2606:4700:4700::1111":     true,
		"2a00:1450:4001:80b::200e": true,
	}
	for text, want := range tests {
		ip := netip.MustParseAddr(text)
		require.Equal(t, want, IsPublicIP(ip), text)
	}
	require.False(t, IsPublicIP(netip.Addr{}))
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	strict := Guard{RequireHTTPS: true}
	open := Guard{}
	sandbox := Guard{AllowPrivate: true}

	type want int
	const (
		ok want = iota
		invalid
		forbidden
	)
	tests := []struct {
		g    Guard
		url  string
		want want
	}{
		{open, "https://example.com/hook", ok},
		{open, "http://example.com/hook?x=1", ok},
		{strict, "https://example.com:8443/hook", ok},
		{open, "https://8.8.8.8/hook", ok},
		{open, "https://[2606:4700:4700::1111]/hook", ok},
		{open, "HTTPS://EXAMPLE.COM/hook", ok},
		{open, "https://hooks.shop.example.com./x", ok},
		{open, "https://my_host.example.com/x", ok},

		{strict, "http://example.com/hook", invalid},
		{open, "ftp://example.com/hook", invalid},
		{open, "example.com/hook", invalid},
		{open, "/hook", invalid},
		{open, "", invalid},
		{open, "http:example.com", invalid},
		{open, "https://user:pass@example.com/hook", invalid},
		{open, "https://user@example.com/hook", invalid},
		{open, "https:///hook", invalid},
		{open, "https://example.com:0/", invalid},
		{open, "https://example.com:70000/", invalid},
		{open, "https://exa mple.com/", invalid},
		{open, "https://exa$mple.com/", invalid},
		{open, "https://a..b/", invalid},
		{open, "http://2130706433/", invalid}, // 127.0.0.1 as one number
		{open, "http://0x7f.1/", invalid},
		{open, "http://127.1/", invalid},
		{open, "https://example.com/" + strings.Repeat("a", 3000), invalid},
		{sandbox, "http://2130706433/", invalid},

		{open, "http://localhost/hook", forbidden},
		{open, "http://LOCALHOST./hook", forbidden},
		{open, "http://api.localhost:8080/hook", forbidden},
		{open, "http://127.0.0.1:8080/hook", forbidden},
		{open, "http://10.0.0.1/hook", forbidden},
		{open, "http://192.168.0.10/hook", forbidden},
		{open, "http://[::1]/hook", forbidden},
		{open, "http://[::ffff:127.0.0.1]/hook", forbidden},
		{open, "http://[fe80::1%25eth0]/hook", forbidden},
		{open, "http://[fd00:ec2::254]/latest/meta-data/", forbidden},
		{open, "http://169.254.169.254/latest/meta-data/", forbidden},
		{open, "http://0.0.0.0/", forbidden},
		{open, "http://100.64.0.1/", forbidden},
		{strict, "https://127.0.0.1/", forbidden},

		{strict, "http://127.0.0.1/", forbidden}, // wrong scheme, but not allowed either way
		{strict, "http://localhost/", forbidden},

		// Hosts are judged in the ASCII (IDNA) form net/http dials.
		{open, "https://127。0。0。1/", forbidden}, // ideographic full stops
		{open, "https://１２７.0.0.1/", forbidden}, // full-width digits
		{open, "https://ｌｏｃａｌｈｏｓｔ/", forbidden},
		{strict, "https://127。0。0。1/", forbidden},
		{open, "https://bücher.example/", ok},
		{open, "https://exa\u00admple .com/", invalid},
		{open, "https://０ｘ７ｆ.1/", invalid}, // full-width "0x7f.1"
		{sandbox, "http://127。0。0。1:9000/", ok},

		{sandbox, "http://localhost:9000/hook", ok},
		{sandbox, "http://127.0.0.1:9000/hook", ok},
		{sandbox, "http://[::1]:9000/hook", ok},
		{sandbox, "http://10.0.0.1/hook", ok},
		{sandbox, "https://user:pass@localhost/hook", invalid},
	}
	for _, tc := range tests {
		err := tc.g.CheckURL(tc.url)
		if tc.want == ok {
			require.NoError(t, err, tc.url)
		}
		switch tc.want {
		case ok:
			require.NoError(t, err, tc.url)
		case invalid:
			require.ErrorIs(t, err, ErrInvalidURL, tc.url)
			require.NotErrorIs(t, err, ErrForbiddenDestination, tc.url)
		case forbidden:
			require.ErrorIs(t, err, ErrForbiddenDestination, tc.url)
		}
	}
}

// server is a loopback test server that counts its requests.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) addrPort() netip.AddrPort {
	return s.Listener.Addr().(*net.TCPAddr).AddrPort()
}

func (s *server) port() string {
	return strconv.Itoa(int(s.addrPort().Port()))
}

func noContent(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

// fakeDNS maps names to addresses and counts lookups; unknown names fail, so
// no test ever reaches a real resolver.
type fakeDNS struct {
	names   map[string][]netip.Addr
	lookups atomic.Int64
}

func (f *fakeDNS) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	f.lookups.Add(1)
	if addrs, ok := f.names[host]; ok {
		return addrs, nil
	}
	return nil, &net.DNSError{Err: "no such host (test resolver)", Name: host, IsNotFound: true}
}

var loopback = []netip.Addr{netip.MustParseAddr("127.0.0.1")}

// post sends a small JSON event to url through c and returns the response
// status; the body is closed here because no test reads it.
func post(t *testing.T, c *http.Client, url string) (status int, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"id":"evt_1"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

func TestClientRefusesLoopbackLiteral(t *testing.T) {
	t.Parallel()
	srv := newServer(t, noContent)
	dns := &fakeDNS{}
	g := Guard{Lookup: dns.lookup}

	_, err := post(t, g.Client(5*time.Second), srv.URL+"/hook")
	require.ErrorIs(t, err, ErrForbiddenDestination)

	// The dialer alone refuses it too, before connecting.
	_, err = g.DialContext(nil)(context.Background(), "tcp", srv.Listener.Addr().String())
	require.ErrorIs(t, err, ErrForbiddenDestination)

	require.Zero(t, srv.hits.Load())
	require.Zero(t, dns.lookups.Load())
}

func TestClientRefusesNameResolvingToLoopback(t *testing.T) {
	t.Parallel()
	srv := newServer(t, noContent)
	dns := &fakeDNS{names: map[string][]netip.Addr{
		"evil.example":   loopback,
		"mapped.example": {netip.MustParseAddr("::ffff:127.0.0.1")},
		"meta.example":   {netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254")},
	}}
	g := Guard{Lookup: dns.lookup}

	for _, host := range []string{"evil.example", "mapped.example"} {
		u := "http://" + host + ":" + srv.port() + "/hook"
		require.NoError(t, g.CheckURL(u), "a name passes CheckURL; only the dial can tell")
		_, err := post(t, g.Client(5*time.Second), u)
		require.ErrorIs(t, err, ErrForbiddenDestination, host)
	}
	// Refused after resolution, without connecting (the metadata addresses are never dialed).
	_, err := g.DialContext(nil)(context.Background(), "tcp", "meta.example:80")
	require.ErrorIs(t, err, ErrForbiddenDestination)
	require.Contains(t, err.Error(), "169.254.169.254")

	require.Equal(t, int64(3), dns.lookups.Load())
	require.Zero(t, srv.hits.Load())

	// Resolution failures are reported as such, not as SSRF refusals.
	_, err = post(t, g.Client(5*time.Second), "http://unknown.example/hook")
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrForbiddenDestination)
	var dnsErr *net.DNSError
	require.ErrorAs(t, err, &dnsErr)
}

func TestDialKeepsOnlyPermittedAddresses(t *testing.T) {
	t.Parallel()
	srv := newServer(t, noContent)
	// The name resolves to a forbidden address first (127.0.0.2, loopback too,
	// so nothing leaves the machine even if this were dialed) and to the test
	// server, which the hook treats as public.
	dns := &fakeDNS{names: map[string][]netip.Addr{
		"mixed.example": {netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.1")},
	}}
	var controls atomic.Int64
	g := Guard{Lookup: dns.lookup, allow: func(ap netip.AddrPort) bool { return ap == srv.addrPort() }}
	d := &net.Dialer{Timeout: 2 * time.Second, Control: func(network, address string, _ syscall.RawConn) error {
		controls.Add(1)
		require.Equal(t, srv.Listener.Addr().String(), address)
		return nil
	}}
	conn, err := g.DialContext(d)(context.Background(), "tcp", "mixed.example:"+srv.port())
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	require.Equal(t, int64(1), controls.Load(), "the caller's Control still runs")

	_, err = g.DialContext(d)(context.Background(), "udp", "mixed.example:"+srv.port())
	require.ErrorIs(t, err, ErrForbiddenDestination)
	_, err = g.DialContext(d)(context.Background(), "tcp6", "mixed.example:"+srv.port())
	require.Error(t, err)
}

func TestControlCheck(t *testing.T) {
	t.Parallel()
	g := Guard{}
	for _, addr := range []string{"127.0.0.1:80", "[::1]:443", "10.1.2.3:8080", "169.254.169.254:80", "[::ffff:127.0.0.1]:80", "[fe80::1%eth0]:80", "nonsense"} {
		require.ErrorIs(t, g.checkDialAddr(addr), ErrForbiddenDestination, addr)
	}
	require.NoError(t, g.checkDialAddr("8.8.8.8:443")) // checked only, never dialed
	require.NoError(t, Guard{AllowPrivate: true}.checkDialAddr("127.0.0.1:80"))
}

func TestRedirectToPrivateRefused(t *testing.T) {
	t.Parallel()
	target := newServer(t, noContent)
	first := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-literal":
			http.Redirect(w, r, "http://127.0.0.1:"+target.port()+"/", http.StatusFound)
		case "/to-name":
			http.Redirect(w, r, "http://evil.example:"+target.port()+"/", http.StatusTemporaryRedirect)
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost:"+target.port()+"/", http.StatusPermanentRedirect)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	dns := &fakeDNS{names: map[string][]netip.Addr{"public.example": loopback, "evil.example": loopback}}
	// The first hop stands for a public server: the hook admits its exact address and port.
	g := Guard{Lookup: dns.lookup, allow: func(ap netip.AddrPort) bool { return ap == first.addrPort() }}
	c := g.Client(5 * time.Second)
	base := "http://public.example:" + first.port()

	status, err := post(t, c, base+"/ok")
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, status)

	for _, path := range []string{"/to-literal", "/to-name", "/to-localhost"} {
		_, err := post(t, c, base+path)
		require.ErrorIs(t, err, ErrForbiddenDestination, path)
	}
	require.Equal(t, int64(4), first.hits.Load())
	require.Zero(t, target.hits.Load())
}

func TestAllowPrivateReachesLoopback(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	target := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Method + " " + string(b))
		w.WriteHeader(http.StatusNoContent)
	})
	first := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/moved", http.StatusTemporaryRedirect)
	})
	dns := &fakeDNS{names: map[string][]netip.Addr{"receiver.test": loopback}}

	c := Guard{AllowPrivate: true}.Client(5 * time.Second)
	status, err := post(t, c, target.URL+"/hook")
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, status)
	require.Equal(t, `POST {"id":"evt_1"}`, got.Load())

	// A 307 keeps the method and the body.
	got.Store("")
	status, err = post(t, c, first.URL+"/hook")
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, status)
	require.Equal(t, `POST {"id":"evt_1"}`, got.Load())

	// Names are resolved through Lookup when it is set.
	status, err = post(t, Guard{AllowPrivate: true, Lookup: dns.lookup}.Client(5*time.Second), "http://receiver.test:"+target.port()+"/")
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, status)
	require.Equal(t, int64(1), dns.lookups.Load())
}

func TestRedirectLimits(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		// /n/<k>: redirect k more times, then answer 204. /302: redirect with 302.
		if r.URL.Path == "/302" {
			http.Redirect(w, r, "/n/0", http.StatusFound)
			return
		}
		k, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/n/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if k == 0 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/n/%d", k-1), http.StatusPermanentRedirect)
	})
	c := Guard{AllowPrivate: true}.Client(5 * time.Second)

	status, err := post(t, c, srv.URL+"/n/3")
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, status)
	require.Equal(t, int64(4), srv.hits.Load())

	_, err = post(t, c, srv.URL+"/n/4")
	require.ErrorIs(t, err, ErrRedirect)
	require.Equal(t, int64(8), srv.hits.Load(), "the fourth redirect is not followed")

	// A 302 would turn the POST into a bodiless GET: refused.
	_, err = post(t, c, srv.URL+"/302")
	require.ErrorIs(t, err, ErrRedirect)
	require.Equal(t, int64(9), srv.hits.Load())
}

func TestRequireHTTPS(t *testing.T) {
	t.Parallel()
	plain := newServer(t, noContent)
	var tlsHits atomic.Int64
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tlsHits.Add(1)
		if r.URL.Path == "/downgrade" {
			http.Redirect(w, r, "http://plain.example:"+plain.port()+"/", http.StatusTemporaryRedirect)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(secure.Close)
	securePort := secure.Listener.Addr().(*net.TCPAddr).AddrPort()
	// Production without private destinations: the TLS server stands for a
	// public host (the hook admits its address), plain.example for a public
	// http receiver.
	dns := &fakeDNS{names: map[string][]netip.Addr{"secure.example": loopback, "plain.example": loopback}}
	g := Guard{RequireHTTPS: true, Lookup: dns.lookup, allow: func(ap netip.AddrPort) bool { return ap == securePort }}
	c := g.Client(5 * time.Second)
	tr := c.Transport.(*guardedTransport).base
	pool := x509.NewCertPool()
	pool.AddCert(secure.Certificate())
	tr.TLSClientConfig.RootCAs = pool
	tr.TLSClientConfig.ServerName = "example.com" // a name of the test certificate
	base := "https://secure.example:" + strconv.Itoa(int(securePort.Port()))

	status, err := post(t, c, base+"/ok")
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, status)

	_, err = post(t, c, base+"/downgrade")
	require.ErrorIs(t, err, ErrInvalidURL)
	_, err = post(t, c, "http://plain.example:"+plain.port()+"/")
	require.ErrorIs(t, err, ErrInvalidURL)

	require.Equal(t, int64(2), tlsHits.Load())
	require.Zero(t, plain.hits.Load())
}

// TestProductionInternalReceiver: in production (RequireHTTPS) with
// AllowPrivate, an http URL is accepted when its host resolves only to
// non-public addresses (docs/api.md, Input rules), at creation (CheckURL, resolving
// names) and at delivery (the http dialer refuses any public address).
// Without AllowPrivate such URLs stay refused.
func TestProductionInternalReceiver(t *testing.T) {
	t.Parallel()
	// 8.8.8.8 stands for a public address: it is only ever refused, never dialed.
	public := netip.MustParseAddr("8.8.8.8")
	dns := &fakeDNS{names: map[string][]netip.Addr{
		"internal.test": loopback,
		"private.test":  {netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("fd00::1")},
		"public.test":   {public},
		"mixed.test":    {netip.MustParseAddr("127.0.0.1"), public},
	}}
	internal := Guard{AllowPrivate: true, RequireHTTPS: true, Lookup: dns.lookup}
	strict := Guard{RequireHTTPS: true, Lookup: dns.lookup}

	for _, tc := range []struct {
		g    Guard
		url  string
		want error // nil: accepted
	}{
		{internal, "http://127.0.0.1:9000/hook", nil},
		{internal, "http://[::1]/hook", nil},
		{internal, "http://10.0.0.7/hook", nil},
		{internal, "http://localhost:9000/hook", nil},
		{internal, "http://internal.test/hook", nil},
		{internal, "http://private.test/hook", nil},
		{internal, "http://127。0。0。1/hook", nil},
		{internal, "https://public.test/hook", nil}, // https names are resolved at delivery only
		{internal, "https://10.0.0.7/hook", nil},
		{internal, "http://public.test/hook", ErrInvalidURL},
		{internal, "http://mixed.test/hook", ErrInvalidURL},
		{internal, "http://8.8.8.8/hook", ErrInvalidURL},
		{internal, "http://unknown.test/hook", ErrForbiddenDestination},
		{strict, "http://127.0.0.1:9000/hook", ErrForbiddenDestination},
		{strict, "http://localhost/hook", ErrForbiddenDestination},
		{strict, "http://internal.test/hook", ErrInvalidURL},
		{strict, "https://127。0。0。1/hook", ErrForbiddenDestination},
	} {
		err := tc.g.CheckURL(tc.url)
		if tc.want == nil {
			require.NoError(t, err, tc.url)
		} else {
			require.ErrorIs(t, err, tc.want, tc.url)
		}
	}

	// Delivery: http reaches internal hosts only.
	target := newServer(t, noContent)
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://internal.test:"+target.port()+"/moved", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(secure.Close)
	c := internal.Client(5 * time.Second)
	pool := x509.NewCertPool()
	pool.AddCert(secure.Certificate())
	c.Transport.(*guardedTransport).base.TLSClientConfig.RootCAs = pool

	for _, u := range []string{target.URL + "/hook", "http://internal.test:" + target.port() + "/hook", secure.URL + "/upgrade-then-plain"} {
		status, err := post(t, c, u)
		require.NoError(t, err, u)
		require.Equal(t, http.StatusNoContent, status, u)
	}
	require.Equal(t, int64(3), target.hits.Load())
	for _, host := range []string{"public.test", "mixed.test"} {
		_, err := post(t, c, "http://"+host+":"+target.port()+"/hook")
		require.ErrorIs(t, err, ErrForbiddenDestination, host)
	}
	_, err := post(t, c, "http://8.8.8.8:"+target.port()+"/hook")
	require.ErrorIs(t, err, ErrInvalidURL)
	require.Equal(t, int64(3), target.hits.Load(), "nothing else arrived")

	// The http dialer alone refuses a public address before connecting.
	_, err = internal.Client(time.Second).Transport.(*guardedTransport).plain.DialContext(context.Background(), "tcp", "public.test:80")
	require.ErrorIs(t, err, ErrForbiddenDestination)
}

func TestClientSettings(t *testing.T) {
	t.Parallel()
	c := Guard{}.Client(10 * time.Second)
	require.Equal(t, 10*time.Second, c.Timeout)
	gt, ok := c.Transport.(*guardedTransport)
	require.True(t, ok)
	require.Nil(t, gt.base.Proxy, "no proxy from the environment")
	require.Equal(t, uint16(0x0303), gt.base.TLSClientConfig.MinVersion) // TLS 1.2
	require.NotNil(t, gt.base.DialContext)
	c.CloseIdleConnections()
}

func TestRoundTripClosesBodyOnRefusal(t *testing.T) {
	t.Parallel()
	body := &closeRecorder{Reader: strings.NewReader("x")}
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/", body)
	require.NoError(t, err)
	resp, err := Guard{}.Client(time.Second).Transport.RoundTrip(req)
	if resp != nil {
		_ = resp.Body.Close()
	}
	require.ErrorIs(t, err, ErrForbiddenDestination)
	require.True(t, body.closed)
	require.True(t, errors.Is(err, ErrForbiddenDestination))
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }
