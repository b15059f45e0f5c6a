package e2e

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// panelSession logs in to the panel of a running server and returns a
// client holding the session cookie; it requires the login to succeed.
func panelSession(t *testing.T, addr, email, password string) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get("http://" + addr + "/admin/login")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	m := csrfInput.FindStringSubmatch(string(page))
	require.NotNil(t, m, string(page))
	resp, err = c.PostForm("http://"+addr+"/admin/login", url.Values{"csrf": {m[1]}, "email": {email}, "password": {password}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	return c
}

// loggedIn reports whether c's session still opens the panel's overview.
func loggedIn(t *testing.T, c *http.Client, addr string) bool {
	t.Helper()
	resp, err := c.Get("http://" + addr + "/admin/")
	require.NoError(t, err)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return true
	}
	loc, err := resp.Location()
	require.NoError(t, err, "status %d", resp.StatusCode)
	return loc.Path != "/admin/login" // a merchant user is sent on to its client
}

func TestUsersResetPassword(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "Loja A")
		require.Equal(t, 0, code, errOut)
		client := testkit.DecodeOne(t, out, testkit.CredKeys...)
		code, out, errOut = run(t, "users", "create", "--database-url", db, "--email", "ops@example.com", "--role", "operator")
		require.Equal(t, 0, code, errOut)
		op := decodeUser(t, out)
		code, out, errOut = run(t, "users", "create", "--database-url", db, "--email", "loja@example.com", "--role", "merchant", "--client", client.ClientID)
		require.Equal(t, 0, code, errOut)
		m := decodeUser(t, out)

		s := startServe(t, db)
		opSession := panelSession(t, s.addr, "ops@example.com", op.Password)
		mSession := panelSession(t, s.addr, "loja@example.com", m.Password)
		require.True(t, loggedIn(t, opSession, s.addr))
		require.True(t, loggedIn(t, mSession, s.addr))

		// The e-mail is matched as users create stores it.
		code, out, errOut = run(t, "users", "reset-password", "--database-url", db, "--email", " Ops@Example.com ")
		require.Equal(t, 0, code, errOut)
		reset := decodeUser(t, out)
		require.Equal(t, printedUser{Email: "ops@example.com", Password: reset.Password, Role: "operator"}, reset)
		require.NotEqual(t, op.Password, reset.Password)
		require.NotContains(t, errOut, reset.Password, "password logged")

		require.False(t, loggedIn(t, opSession, s.addr), "the user's sessions end")
		require.True(t, loggedIn(t, mSession, s.addr), "other users' sessions stay")
		status, _ := panelLogin(t, s.addr, "ops@example.com", op.Password)
		require.Equal(t, http.StatusUnauthorized, status, "the old password stops working")
		status, page := panelLogin(t, s.addr, "ops@example.com", reset.Password)
		require.Equal(t, http.StatusSeeOther, status)
		require.Contains(t, page, "ops@example.com")

		// A merchant user's reset prints its client, as users create does.
		code, out, errOut = run(t, "users", "reset-password", "--database-url", db, "--email", "loja@example.com")
		require.Equal(t, 0, code, errOut)
		mr := decodeUser(t, out)
		require.NotNil(t, mr.ClientID)
		require.Equal(t, client.ClientID, *mr.ClientID)
		require.False(t, loggedIn(t, mSession, s.addr))

		code, out, errOut = run(t, "users", "reset-password", "--database-url", db, "--email", "nobody@example.com")
		require.Equal(t, 1, code)
		require.Empty(t, out)
		require.Equal(t, "pixgate: no user with e-mail \"nobody@example.com\"\n", errOut)
		code, out, errOut = run(t, "users", "reset-password", "--database-url", db)
		require.Equal(t, 2, code)
		require.Empty(t, out)
		require.Contains(t, errOut, "email")
		s.stop(t)
	})
}
