package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/sim"
	"github.com/pixgate/pixgate/internal/testkit"
	"github.com/pixgate/pixgate/webhooksig"
)

var pixgate testkit.Binary

func TestMain(m *testing.M) {
	code := m.Run()
	pixgate.Remove()
	os.Exit(code)
}

// buildPixgate builds cmd/pixgate once per test binary and returns its path.
func buildPixgate(t *testing.T) string { return pixgate.Path(t) }

var testHTTP = &http.Client{Timeout: 30 * time.Second}

// TestClusterSQLite: one node on SQLite takes a charge, the PSP's payer
// pays it, the merchant's receiver gets the signed event, and the node
// comes back on its address after a SIGKILL.
func TestClusterSQLite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts pixgate processes")
	}
	exerciseCluster(t, sim.ClusterConfig{DB: "sqlite"})
}

// TestClusterPostgres is TestClusterSQLite with two nodes sharing one
// PostgreSQL database, which Close drops.
func TestClusterPostgres(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts pixgate processes")
	}
	testkit.RequirePostgres(t)
	server := os.Getenv(testkit.PostgresURLEnv)
	cl := exerciseCluster(t, sim.ClusterConfig{DB: "postgres", PostgresURL: server, Nodes: 2})

	name := cl.Database()
	require.True(t, strings.HasPrefix(name, "pixgate_sim_"), name)
	conn := pgConnect(t, server)
	exists := func() bool {
		var n int
		require.NoError(t, conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n))
		return n == 1
	}
	require.True(t, exists(), "the cluster's database is on the server")
	require.NoError(t, cl.Close())
	require.False(t, exists(), "Close dropped the database")
}

func pgConnect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// exerciseCluster starts a cluster of cfg and walks one paid charge and
// one kill and restart of node 0 through it.
func exerciseCluster(t *testing.T, cfg sim.ClusterConfig) *sim.Cluster {
	t.Helper()
	cfg.Pixgate = buildPixgate(t)
	cfg.Dir = t.TempDir()
	cfg.Seed = 42
	ctx := t.Context()
	cl, err := sim.StartCluster(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cl.Close()) })

	addrs := cl.Addrs()
	nodes := max(cfg.Nodes, 1)
	require.Len(t, addrs, nodes)
	for i, a := range addrs {
		require.True(t, cl.Up(i))
		require.Equal(t, http.StatusOK, healthz(a), "node %d", i)
	}
	require.Contains(t, []string{addrs[0], addrs[nodes-1]}, hookAddr(cl.PSP().State().Webhook), "a node's webhook is registered")

	clients := cl.Clients()
	require.Len(t, clients, 2)
	require.NotEqual(t, clients[0].ClientID, clients[1].ClientID)
	for _, c := range clients {
		require.True(t, strings.HasPrefix(c.ClientID, "cli_live_"), "a production client: %s", c.ClientID)
		got, err := cl.DB().Client(ctx, c.ClientID)
		require.NoError(t, err, "DB() is the nodes' database")
		require.Equal(t, "production", got.Environment)
	}

	// A charge on the last node, paid by the PSP's payer.
	last := addrs[nodes-1]
	status, resp := call(t, last, clients[0], "POST", "/api/v1/gateway/request-qrcode", chargeBody("sim-cluster-1", 25, cl.Receiver().URL(0)))
	require.Equal(t, http.StatusCreated, status, "%v", resp)
	id, _ := resp["payment_id"].(string)
	code, _ := resp["qrcode"].(string)
	require.NotEmpty(t, code)
	var txid string
	for _, cob := range cl.PSP().State().Cobs {
		if cob.PixCopiaECola == code {
			txid = cob.TxID
		}
	}
	require.NotEmpty(t, txid, "the PSP holds the charge's cob")
	payCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err = cl.PSP().Pay(payCtx, txid)
	require.NoError(t, err)

	paid := func() *sim.Delivery {
		for _, d := range cl.Receiver().Deliveries() {
			if d.Event == "pix.cashin.paid" && d.PaymentID == id && d.Valid && d.Status == http.StatusNoContent {
				return &d
			}
		}
		return nil
	}
	require.Eventually(t, func() bool { return paid() != nil }, 30*time.Second, 50*time.Millisecond,
		"the receiver gets a valid pix.cashin.paid; node log:\n%s", readFile(cl.NodeLog(nodes-1)))
	require.Equal(t, 0, paid().Client)
	require.NotEmpty(t, paid().WebhookID)
	require.Zero(t, cl.Receiver().Invalid())

	// SIGKILL and restart of node 0: the same address answers again, and
	// its log holds both lives.
	require.NoError(t, cl.Kill(0))
	require.False(t, cl.Up(0))
	require.Zero(t, healthz(addrs[0]), "nothing listens on a killed node's address")
	require.NoError(t, cl.Kill(0), "killing a node that is down does nothing")
	require.NoError(t, cl.Restart(ctx, 0))
	require.True(t, cl.Up(0))
	require.Equal(t, addrs, cl.Addrs())
	require.Equal(t, http.StatusOK, healthz(addrs[0]))
	require.Error(t, cl.Restart(ctx, 0), "a running node is not started twice")
	require.Equal(t, 2, strings.Count(readFile(cl.NodeLog(0)), `"msg":"listening"`))

	status, resp = call(t, addrs[0], clients[0], "POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": id})
	require.Equal(t, http.StatusOK, status, "%v", resp)
	data, _ := resp["data"].(map[string]any)
	require.Equal(t, "PAID", data["status"])
	return cl
}

// healthz is the status of GET /healthz at addr; 0 when nothing answers.
func healthz(addr string) int {
	resp, err := testHTTP.Get("http://" + addr + "/healthz")
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// hookAddr is the host:port of a PSP webhook URL.
func hookAddr(u string) string {
	rest, _ := strings.CutPrefix(u, "http://")
	host, _, _ := strings.Cut(rest, "/")
	return host
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// call sends one authenticated JSON request to the node at addr.
func call(t *testing.T, addr string, c sim.Credentials, method, path string, body any) (int, map[string]any) {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), method, "http://"+addr+path, bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("stpi", c.ClientID)
	req.Header.Set("stps", c.ClientSecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := testHTTP.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	_ = json.Unmarshal(out, &m)
	return resp.StatusCode, m
}

func chargeBody(ext string, amount float64, postback string) map[string]any {
	return map[string]any{
		"amount": amount, "external_id": ext, "payerQuestion": "Pedido", "postbackUrl": postback,
		"payer": map[string]any{"name": "Maria", "document": "52998224725", "phoneNumber": "11987654321", "email": "m@example.com",
			"address": map[string]any{"street": "Rua A", "number": "1", "neighborhood": "Centro", "city": "Recife", "state": "PE", "zipCode": "50000000"}},
		"products": []any{map[string]any{"name": "X", "quantity": "1", "price": amount}},
	}
}

// TestReceiver: the receiver verifies each delivery with its client's
// secret, answers 401 to a bad signature, and fails or delays as SetMode
// says, the failures drawn from its seed.
func TestReceiver(t *testing.T) {
	t.Parallel()
	clients := []sim.Credentials{
		{ClientID: "cli_a", WebhookSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		{ClientID: "cli_b", WebhookSecret: "whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo="},
	}
	r, err := sim.NewReceiver(clients, 7)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close()) })

	post := func(url, secret, id string, body string) int {
		t.Helper()
		now := time.Now()
		sig, err := webhooksig.Sign(secret, id, now, []byte(body))
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
		req.Header.Set("webhook-signature", sig)
		resp, err := testHTTP.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	const body = `{"id":"evt_1","event":"pix.refund.completed","payment_id":"p1","refund_id":"r1"}`
	require.Equal(t, http.StatusNoContent, post(r.URL(1), clients[1].WebhookSecret, "evt_1", body))
	require.Equal(t, http.StatusUnauthorized, post(r.URL(0), clients[1].WebhookSecret, "evt_1", body), "another client's secret")
	require.Equal(t, http.StatusUnauthorized, post(r.URL(0)+"x", clients[0].WebhookSecret, "evt_1", body), "no such client")
	require.Equal(t, 2, r.Invalid())
	d := r.Deliveries()
	require.Len(t, d, 3)
	require.Equal(t, sim.Delivery{Client: 1, WebhookID: "evt_1", Event: "pix.refund.completed", PaymentID: "p1", RefundID: "r1",
		Valid: true, Status: http.StatusNoContent, At: d[0].At, Body: []byte(body)}, d[0])
	require.False(t, d[1].Valid)
	require.Equal(t, -1, d[2].Client)

	r.SetMode(1, 0)
	require.Equal(t, http.StatusInternalServerError, post(r.URL(0), clients[0].WebhookSecret, "evt_2", body))
	r.SetMode(0, 300*time.Millisecond)
	start := time.Now()
	require.Equal(t, http.StatusNoContent, post(r.URL(0), clients[0].WebhookSecret, "evt_3", body))
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "a slow receiver")

	// The same seed fails the same deliveries.
	outcomes := func(seed uint64) []int {
		r, err := sim.NewReceiver(clients, seed)
		require.NoError(t, err)
		defer func() { require.NoError(t, r.Close()) }()
		r.SetMode(0.5, 0)
		var got []int
		for i := range 32 {
			got = append(got, post(r.URL(0), clients[0].WebhookSecret, fmt.Sprintf("evt_%d", i), body))
		}
		return got
	}
	a := outcomes(99)
	require.Equal(t, a, outcomes(99))
	require.Contains(t, a, http.StatusInternalServerError)
	require.Contains(t, a, http.StatusNoContent)
}
