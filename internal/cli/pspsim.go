package cli

import (
	"context"
	"net"
	"time"

	"github.com/pixgate/pixgate/internal/pspsim"
)

// pspSimCmd is `pixgate psp-sim`. It reads none of pixgate's settings
// but two: --addr is pixgate's own listen address (PIXGATE_ADDR, as serve
// reads it), which the printed PIXGATE_PSP_WEBHOOK_URL points at, and the
// log level. Its own listen address is --api-addr.
type pspSimCmd struct {
	APIAddr       string        `name:"api-addr" env:"PIXGATE_PSP_SIM_ADDR" default:"127.0.0.1:8443" help:"Where the simulated PSP's API (mutual TLS) listens."`
	ControlAddr   string        `name:"control-addr" env:"PIXGATE_PSP_SIM_CONTROL_ADDR" default:"127.0.0.1:8444" help:"Where the control API (plain HTTP: /sim/pay/{txid}, /sim/paycobv, /sim/faults, /sim/settle, /sim/state) listens; keep it on loopback."`
	Dir           string        `name:"dir" env:"PIXGATE_PSP_SIM_DIR" help:"Directory for the generated certificates and keys (default: a new temporary directory)."`
	Key           string        `name:"key" env:"PIXGATE_PSP_SIM_PIX_KEY" help:"The merchant's PIX key at the simulated PSP (default: a random EVP key)."`
	ClientID      string        `name:"client-id" env:"PIXGATE_PSP_SIM_CLIENT_ID" help:"OAuth 2.0 client id (default: generated)."`
	ClientSecret  string        `name:"client-secret" env:"PIXGATE_PSP_SIM_CLIENT_SECRET" help:"OAuth 2.0 client secret (default: generated)."`
	SettleDelay   time.Duration `name:"settle-delay" env:"PIXGATE_PSP_SIM_SETTLE_DELAY" default:"2s" help:"How long payouts and refunds stay EM_PROCESSAMENTO."`
	Latency       time.Duration `name:"latency" env:"PIXGATE_PSP_SIM_LATENCY" default:"0s" help:"How long every API request, token requests included, waits before it is handled (a slow PSP)."`
	LatencyJitter time.Duration `name:"latency-jitter" env:"PIXGATE_PSP_SIM_LATENCY_JITTER" default:"0s" help:"Each request's wait is uniform within --latency ± this."`
	RateLimit     int           `name:"rate-limit" env:"PIXGATE_PSP_SIM_RATE_LIMIT" default:"0" help:"API requests per second the simulated PSP handles (0: no limit); beyond it, 429 with Retry-After. Token requests are not limited."`
	PixgateAddr   string        `name:"addr" env:"PIXGATE_ADDR" default:"127.0.0.1:8080" help:"pixgate's listen address (serve's --addr), where the printed PIXGATE_PSP_WEBHOOK_URL points (on loopback when it listens on every address)."`
	LogLevel      string        `name:"log-level" env:"PIXGATE_LOG_LEVEL" default:"info" enum:"debug,info,warn,error" help:"debug, info, warn or error."`
}

// pspSim runs the simulated PSP until ctx ends, after printing the
// environment that points pixgate at it.
func (a *app) pspSim(ctx context.Context, c pspSimCmd) error {
	return pspsim.Run(ctx, pspsim.CommandConfig{
		Addr: c.APIAddr, ControlAddr: c.ControlAddr, Dir: c.Dir,
		PixKey: c.Key, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		SettleDelay: c.SettleDelay, Latency: c.Latency, LatencyJitter: c.LatencyJitter, RateLimit: c.RateLimit, WebhookBase: "http://" + loopback(c.PixgateAddr), Log: a.log,
	}, a.stdout)
}

// loopback is addr with an empty or unspecified host replaced by
// 127.0.0.1: where a simulator on this machine reaches pixgate.
func loopback(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
