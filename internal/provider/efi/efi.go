// Package efi is the provider for Efí (formerly Gerencianet): the API Pix
// of provider/apipix for charges, received Pix and refunds, plus Efí's
// Pix-send API for payouts (PUT /v3/gn/pix/{idEnvio}, read back with
// GET /v2/gn/pix/enviados/id-envio/{idEnvio}).
package efi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/apipix"
)

// maxInfo is the longest pagador.infoPagador Efí accepts.
const maxInfo = 140

// Client is the Efí provider. Everything but payouts is the embedded API
// Pix client's.
type Client struct {
	*apipix.Client
}

// New validates cfg (as apipix.New does) and returns an Efí client.
func New(cfg apipix.Config) (*Client, error) { return newClient(cfg) }

// newClient lets tests shorten the timeouts.
func newClient(cfg apipix.Config, opts ...apipix.Option) (*Client, error) {
	opts = append([]apipix.Option{
		apipix.WithName(provider.NameEfi),
		// pixgate authenticates Efí's webhook calls by their secret path
		// and confirms every Pix with a GET, so Efí is told not to insist
		// on mutual TLS towards pixgate (docs/psp.md, The webhook).
		apipix.WithWebhookHeader("x-skip-mtls-checking", "true"),
	}, opts...)
	c, err := apipix.New(cfg, opts...)
	if err != nil {
		return nil, fmt.Errorf("efi: %w", err)
	}
	return &Client{Client: c}, nil
}

// Capabilities: payouts too; 32-character txids.
func (c *Client) Capabilities() provider.Capabilities {
	return provider.Capabilities{Payouts: true, TxIDLength: 32}
}

type sendRequest struct {
	Valor      string     `json:"valor"`
	Pagador    pagador    `json:"pagador"`
	Favorecido favorecido `json:"favorecido"`
}

type pagador struct {
	Chave       string `json:"chave"`
	InfoPagador string `json:"infoPagador,omitempty"`
}

type favorecido struct {
	Chave string `json:"chave"`
}

// sendAnswer is both the PUT's answer (e2eId) and the GET's (endToEndId).
type sendAnswer struct {
	IDEnvio    string `json:"idEnvio"`
	E2EID      string `json:"e2eId"`
	EndToEndID string `json:"endToEndId"`
	Valor      string `json:"valor"`
	Status     string `json:"status"`
}

// Send sends a payout with PUT /v3/gn/pix/{idEnvio}, once: a 5xx or a
// timeout is an unknown outcome that the caller resolves with Status
// before any resend. Refunds go through the API Pix.
func (c *Client) Send(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	if t.Refund {
		return c.SendRefund(ctx, t)
	}
	id, err := payoutID(t)
	if err != nil {
		return provider.TransferState{}, err
	}
	if t.Amount <= 0 || t.Key == "" {
		return provider.TransferState{}, fmt.Errorf("efi: payout %s: amount and key are required: %w", t.ID, provider.ErrRejected)
	}
	body := sendRequest{
		Valor:      t.Amount.String(),
		Pagador:    pagador{Chave: c.PixKey(), InfoPagador: truncate(t.Description, maxInfo)},
		Favorecido: favorecido{Chave: t.Key},
	}
	var ans sendAnswer
	err = c.Do(ctx, apipix.Request{
		Method: http.MethodPut,
		URL:    c.Origin() + "/v3/gn/pix/" + url.PathEscape(id),
		Body:   body,
		// Never retried: a payout is never sent twice; the caller reads
		// Status after an unknown outcome.
		Idempotent: false,
	}, &ans)
	if err != nil {
		return provider.TransferState{}, fmt.Errorf("send payout %s: %w", t.ID, err)
	}
	return payoutState(t, id, ans, ans.E2EID)
}

// Status reads a payout with GET /v2/gn/pix/enviados/id-envio/{idEnvio};
// provider.ErrNotFound means Efí never received it. Refunds go through the
// API Pix.
func (c *Client) Status(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	if t.Refund {
		return c.RefundStatus(ctx, t)
	}
	id, err := payoutID(t)
	if err != nil {
		return provider.TransferState{}, err
	}
	var ans sendAnswer
	err = c.Do(ctx, apipix.Request{
		Method:     http.MethodGet,
		URL:        c.Origin() + "/v2/gn/pix/enviados/id-envio/" + url.PathEscape(id),
		Idempotent: true,
	}, &ans)
	if err != nil {
		return provider.TransferState{}, fmt.Errorf("payout status %s: %w", t.ID, err)
	}
	e2e := ans.EndToEndID
	if e2e == "" {
		e2e = ans.E2EID
	}
	return payoutState(t, id, ans, e2e)
}

// payoutID is the idEnvio of t: its UUID as 32 hex characters.
func payoutID(t provider.Transfer) (string, error) {
	id := provider.HexID(t.ID)
	if !apipix.ValidHexID(id) {
		return "", fmt.Errorf("efi: payout %q: id is not a UUID: %w", t.ID, provider.ErrRejected)
	}
	return id, nil
}

// payoutState validates Efí's answer about t and converts it.
func payoutState(t provider.Transfer, id string, ans sendAnswer, e2e string) (provider.TransferState, error) {
	if ans.IDEnvio != "" && !strings.EqualFold(ans.IDEnvio, id) {
		return provider.TransferState{}, fmt.Errorf("efi: payout %s: answer is about idEnvio %q", t.ID, truncate(ans.IDEnvio, 40))
	}
	if ans.Valor != "" {
		if v, err := pix.ParseAmountString(ans.Valor); err != nil || v != t.Amount {
			return provider.TransferState{}, fmt.Errorf("efi: payout %s: answer's valor %q is not %s", t.ID, truncate(ans.Valor, 20), t.Amount)
		}
	}
	if e2e != "" && !provider.ValidEndToEnd(e2e) {
		return provider.TransferState{}, fmt.Errorf("efi: payout %s: end-to-end id %q is not 32 letters and digits", t.ID, truncate(e2e, 40))
	}
	var st provider.Status
	switch ans.Status {
	case "EM_PROCESSAMENTO":
		st = provider.Processing
	case "REALIZADO":
		st = provider.Completed
	case "NAO_REALIZADO":
		st = provider.Failed
	default:
		return provider.TransferState{}, fmt.Errorf("efi: payout %s: unknown status %q", t.ID, truncate(ans.Status, 40))
	}
	return provider.TransferState{ID: t.ID, Status: st, EndToEndID: e2e}, nil
}

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

var _ provider.Provider = (*Client)(nil)

// sentList is the answer of GET /v2/gn/pix/enviados.
type sentList struct {
	Parametros struct {
		Paginacao struct {
			QuantidadeDePaginas int `json:"quantidadeDePaginas"`
		} `json:"paginacao"`
	} `json:"parametros"`
	Pix []sendAnswer `json:"pix"`
}

// SentBetween reads the payouts requested in [from, to) with Efí's list of
// sent Pix, GET /v2/gn/pix/enviados?inicio&fim, every page: the states of
// many payouts in a few calls. An entry that is not a payout of pixgate's
// (its idEnvio is not a UUID's 32 hex characters) or that is malformed is
// skipped: the payout's own reading (Status) still finds its state.
func (c *Client) SentBetween(ctx context.Context, from, to time.Time) ([]provider.TransferState, error) {
	var out []provider.TransferState
	for page := 0; page < maxPages; page++ {
		q := url.Values{}
		q.Set("inicio", from.UTC().Truncate(time.Second).Format(time.RFC3339))
		q.Set("fim", to.UTC().Add(time.Second-1).Truncate(time.Second).Format(time.RFC3339))
		q.Set("paginacao.paginaAtual", strconv.Itoa(page))
		q.Set("paginacao.itensPorPagina", strconv.Itoa(sentPageSize))
		var ans sentList
		err := c.Do(ctx, apipix.Request{Method: http.MethodGet, URL: c.Origin() + "/v2/gn/pix/enviados?" + q.Encode(), Idempotent: true}, &ans)
		if err != nil {
			return nil, fmt.Errorf("sent payouts (page %d): %w", page, err)
		}
		for _, a := range ans.Pix {
			id := provider.UUIDFromHex(a.IDEnvio)
			if id == "" {
				continue // not sent by pixgate
			}
			e2e := a.EndToEndID
			if e2e == "" {
				e2e = a.E2EID
			}
			st, err := payoutState(provider.Transfer{ID: id}, a.IDEnvio, sendAnswer{IDEnvio: a.IDEnvio, Status: a.Status}, e2e)
			if err != nil {
				continue // malformed: the payout's own reading will tell
			}
			out = append(out, st)
		}
		if page+1 >= ans.Parametros.Paginacao.QuantidadeDePaginas {
			return out, nil
		}
	}
	return nil, fmt.Errorf("efi: sent payouts: more than %d pages", maxPages)
}

const (
	// sentPageSize is how many sent Pix one page of the list holds: Efí's
	// largest page, so that a reading takes few calls.
	sentPageSize = 1000
	// maxPages bounds one reading of the list.
	maxPages = 1000
)

var _ provider.SentLister = (*Client)(nil)
