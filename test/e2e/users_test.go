package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// printedUser is what users create prints.
type printedUser struct {
	Email    string  `json:"email"`
	Password string  `json:"password"`
	Role     string  `json:"role"`
	ClientID *string `json:"client_id"`
}

func decodeUser(t *testing.T, out string) printedUser {
	t.Helper()
	require.True(t, strings.HasSuffix(out, "}\n"), "stdout must be one JSON object and a newline: %q", out)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	require.ElementsMatch(t, []string{"email", "password", "role", "client_id"}, keys)
	var u printedUser
	require.NoError(t, json.Unmarshal([]byte(out), &u))
	require.Len(t, u.Password, 24)
	return u
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// panelLogin logs in to the panel of a running server and returns the
// status of the login POST (303 on success) and the page it leads to.
func panelLogin(t *testing.T, addr, email, password string) (int, string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (int, string) {
		resp, err := c.Get("http://" + addr + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	status, page := get("/admin/login")
	require.Equal(t, http.StatusOK, status)
	m := csrfInput.FindStringSubmatch(page)
	require.NotNil(t, m, page)
	resp, err := c.PostForm("http://"+addr+"/admin/login", url.Values{"csrf": {m[1]}, "email": {email}, "password": {password}})
	require.NoError(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return resp.StatusCode, ""
	}
	status, page = get(resp.Header.Get("Location"))
	if status == http.StatusSeeOther { // merchant users go on to their client
		resp, err := c.Get("http://" + addr + "/admin/")
		require.NoError(t, err)
		resp.Body.Close()
		_, page = get(resp.Header.Get("Location"))
	}
	return http.StatusSeeOther, page
}

func TestUsersCreate(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "Loja A")
		require.Equal(t, 0, code, errOut)
		client := testkit.DecodeOne(t, out, testkit.CredKeys...)

		code, out, errOut = run(t, "users", "create", "--database-url", db, "--email", "Ops@Example.com", "--role", "operator")
		require.Equal(t, 0, code, errOut)
		op := decodeUser(t, out)
		require.Equal(t, printedUser{Email: "ops@example.com", Password: op.Password, Role: "operator"}, op)
		require.NotContains(t, errOut, op.Password, "password logged")

		code, out, errOut = run(t, "users", "create", "--database-url", db, "--email", "loja@example.com", "--role", "merchant", "--client", client.ClientID)
		require.Equal(t, 0, code, errOut)
		m := decodeUser(t, out)
		require.NotNil(t, m.ClientID)
		require.Equal(t, client.ClientID, *m.ClientID)
		require.NotEqual(t, op.Password, m.Password)

		for _, tc := range []struct {
			args []string
			code int
			msg  string
		}{
			{[]string{"--email", "ops@example.com", "--role", "operator"}, 1, "exists"},
			{[]string{"--email", "x@example.com", "--role", "merchant"}, 1, "merchant users need --client"},
			{[]string{"--email", "x@example.com", "--role", "merchant", "--client", "cli_test_nope"}, 1, "not found"},
			{[]string{"--email", "x@example.com", "--role", "operator", "--client", client.ClientID}, 1, "only for merchant users"},
			{[]string{"--email", "not an email", "--role", "operator"}, 1, "invalid e-mail"},
			{[]string{"--email", "x@example.com", "--role", "root"}, 2, "role"},
			{[]string{"--role", "operator"}, 2, "email"},
		} {
			code, out, errOut := run(t, append([]string{"users", "create", "--database-url", db}, tc.args...)...)
			require.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
			require.Empty(t, out)
			require.Contains(t, errOut, tc.msg, tc.args)
		}

		// The printed passwords log in to a served panel.
		s := startServe(t, db)
		require.Empty(t, s.stdout.String(), "a database with clients gets no bootstrap")
		status, page := panelLogin(t, s.addr, "ops@example.com", op.Password)
		require.Equal(t, http.StatusSeeOther, status)
		require.Contains(t, page, "ops@example.com")
		status, page = panelLogin(t, s.addr, "loja@example.com", m.Password)
		require.Equal(t, http.StatusSeeOther, status)
		require.Contains(t, page, "Loja A")
		status, _ = panelLogin(t, s.addr, "ops@example.com", m.Password)
		require.Equal(t, http.StatusUnauthorized, status)
	})
}

func TestServeCreatesSandboxAdmin(t *testing.T) {
	t.Parallel()
	db := testkit.SQLiteURL(t)
	s := startServe(t, db)
	out := s.stdout.String()
	testkit.DecodeOne(t, out, testkit.ServeKeys...)
	var boot struct {
		AdminEmail    string `json:"admin_email"`
		AdminPassword string `json:"admin_password"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &boot))
	require.Equal(t, "admin@sandbox.local", boot.AdminEmail)
	require.Len(t, boot.AdminPassword, 24)
	require.NotContains(t, s.stderr.String(), boot.AdminPassword, "password logged")
	status, page := panelLogin(t, s.addr, boot.AdminEmail, boot.AdminPassword)
	require.Equal(t, http.StatusSeeOther, status)
	require.Contains(t, page, "admin@sandbox.local")
	s.stop(t)

	// A second start prints nothing and keeps the operator.
	s = startServe(t, db)
	require.Empty(t, s.stdout.String())
	status, _ = panelLogin(t, s.addr, boot.AdminEmail, boot.AdminPassword)
	require.Equal(t, http.StatusSeeOther, status)
}
