package efi

import (
	"context"
	"errors"
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

// This file is Efí's MED infractions (docs/psp.md, MED): the list, GET
// /v2/gn/infracoes, and the defense, POST /v2/gn/infracoes/{idInfracao}/defesa.

// Efí's statuses of an infraction.
const (
	infracaoAberta    = "ABERTA"
	infracaoEmDefesa  = "EM_DEFESA"
	infracaoAceita    = "ACEITA"
	infracaoRejeitada = "REJEITADA"
	infracaoCancelada = "CANCELADA_EFI"
)

// infractionList is the answer of GET /v2/gn/infracoes.
type infractionList struct {
	Parametros struct {
		Paginacao struct {
			QuantidadeDePaginas int `json:"quantidadeDePaginas"`
		} `json:"paginacao"`
	} `json:"parametros"`
	Infracoes []infractionWire `json:"infracoes"`
}

// infractionWire is one infraction of the list, reduced to the fields used.
type infractionWire struct {
	IDInfracao   string `json:"idInfracao"`
	EndToEndID   string `json:"endToEndId"`
	Valor        string `json:"valor"`
	Status       string `json:"status"`
	Razao        string `json:"razao"`
	TipoSituacao string `json:"tipoSituacao"`
	Defesa       string `json:"defesa"`
	DadosAnalise struct {
		Abertura         string `json:"abertura"`
		PrazoFinalizacao string `json:"prazoFinalizacao"`
	} `json:"dadosAnalise"`
	CriadoEm string `json:"criadoEm"`
}

// defenseRequest is the body of POST /v2/gn/infracoes/{idInfracao}/defesa.
type defenseRequest struct {
	Analise       string `json:"analise"`
	Justificativa string `json:"justificativa"`
}

// infractionsPageSize is how many infractions one page asks for.
const infractionsPageSize = 100

// saoPaulo is Efí's civil time (UTC−3, without summer time since 2019):
// the calendar its list's days are most likely counted in.
var saoPaulo = time.FixedZone("BRT", -3*3600)

// Infractions reads Efí's MED infractions of [from, to) with GET
// /v2/gn/infracoes?inicio&fim, every page. Efí documents inicio and fim
// as dates (YYYY-MM-DD), so the days asked for cover the window whether
// Efí counts them in UTC or in São Paulo's time: the answer may hold
// infractions from around the window too, which the caller records once
// by id. An infraction that does not validate, or whose status is not
// one of Efí's, is logged and skipped, so that one cannot stall every
// later reading.
func (c *Client) Infractions(ctx context.Context, from, to time.Time) ([]provider.Infraction, error) {
	var out []provider.Infraction
	for page := 0; page < maxPages; page++ {
		q := url.Values{}
		q.Set("inicio", from.In(saoPaulo).Format(time.DateOnly))
		q.Set("fim", to.UTC().Format(time.DateOnly))
		q.Set("paginacao.paginaAtual", strconv.Itoa(page))
		q.Set("paginacao.itensPorPagina", strconv.Itoa(infractionsPageSize))
		var ans infractionList
		err := c.Do(ctx, apipix.Request{Method: http.MethodGet, URL: c.Origin() + "/v2/gn/infracoes?" + q.Encode(), Idempotent: true}, &ans)
		if err != nil {
			return nil, fmt.Errorf("infractions (page %d): %w", page, err)
		}
		for _, w := range ans.Infracoes {
			in, err := toInfraction(w)
			if err != nil {
				c.Log().Error("infraction skipped: invalid", "idInfracao", truncate(w.IDInfracao, 40), "error", err.Error())
				continue
			}
			out = append(out, in)
		}
		if page+1 >= ans.Parametros.Paginacao.QuantidadeDePaginas {
			return out, nil
		}
	}
	return nil, fmt.Errorf("efi: infractions: more than %d pages", maxPages)
}

// Defend sends the merchant's answer to the infraction id with POST
// /v2/gn/infracoes/{idInfracao}/defesa, once: Efí takes one defense, so a
// retry could only turn an unknown outcome into a false refusal.
// provider.ErrNotFound: Efí does not know id; provider.ErrRejected: Efí
// refused it (a second defense, a closed infraction, past its deadline).
func (c *Client) Defend(ctx context.Context, infractionID string, accept bool, justification string) error {
	if !validInfractionID(infractionID) {
		return fmt.Errorf("efi: defend infraction %q: not an idInfracao: %w", truncate(infractionID, 40), provider.ErrRejected)
	}
	if strings.TrimSpace(justification) == "" {
		return fmt.Errorf("efi: defend infraction %s: a justification is required: %w", infractionID, provider.ErrRejected)
	}
	body := defenseRequest{Analise: "rejeitado", Justificativa: justification}
	if accept {
		body.Analise = "aceito"
	}
	err := c.Do(ctx, apipix.Request{
		Method:     http.MethodPost,
		URL:        c.Origin() + "/v2/gn/infracoes/" + url.PathEscape(infractionID) + "/defesa",
		Body:       body,
		Idempotent: false,
	}, nil)
	if se, ok := errors.AsType[*apipix.StatusError](err); ok && se.Status == http.StatusNotFound {
		// The API client takes a 404 to a POST for a refusal; here it
		// names the infraction, which Efí does not know.
		return fmt.Errorf("efi: defend infraction %s: %s: %w", infractionID, se.Error(), provider.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("defend infraction %s: %w", infractionID, err)
	}
	return nil
}

// toInfraction validates one of Efí's infractions and converts it.
func toInfraction(w infractionWire) (provider.Infraction, error) {
	if !validInfractionID(w.IDInfracao) {
		return provider.Infraction{}, errors.New("idInfracao is missing or not an id")
	}
	if !provider.ValidEndToEnd(w.EndToEndID) {
		return provider.Infraction{}, fmt.Errorf("endToEndId %q is not 32 letters and digits", truncate(w.EndToEndID, 40))
	}
	in := provider.Infraction{ID: w.IDInfracao, EndToEndID: w.EndToEndID, Reason: reasonOf(w.Razao, w.TipoSituacao), Defense: w.Defesa}
	if w.Valor != "" {
		v, err := pix.ParseAmountString(w.Valor)
		if err != nil || v <= 0 {
			return provider.Infraction{}, fmt.Errorf("valor %q is not a positive amount", truncate(w.Valor, 20))
		}
		in.Amount = v
	}
	switch w.Status {
	case infracaoAberta, infracaoEmDefesa:
		in.Status = provider.InfractionOpen
	case infracaoAceita:
		in.Status = provider.InfractionAccepted
	case infracaoRejeitada, infracaoCancelada:
		in.Status = provider.InfractionReleased
	default:
		return provider.Infraction{}, fmt.Errorf("unknown status %q", truncate(w.Status, 40))
	}
	var err error
	if in.RespondBy, err = parseEfiTime(w.DadosAnalise.PrazoFinalizacao); err != nil {
		return provider.Infraction{}, fmt.Errorf("dadosAnalise.prazoFinalizacao: %w", err)
	}
	opened := w.DadosAnalise.Abertura
	if opened == "" {
		opened = w.CriadoEm
	}
	if in.OpenedAt, err = parseEfiTime(opened); err != nil {
		return provider.Infraction{}, fmt.Errorf("dadosAnalise.abertura: %w", err)
	}
	return in, nil
}

// reasonOf reads the reason of an infraction from Efí's razao (and its
// tipoSituacao, which only fraud reports have). Efí does not publish
// razao's values: a MED natureza there is read as a natureza, and a text
// naming an operational failure or Pix Automático as that; anything else
// is the MED's common case, fraud.
func reasonOf(razao, tipoSituacao string) pix.DisputeReason {
	switch razao {
	case provider.NatureMEDFraud, provider.NatureMEDOperational, provider.NatureMEDPixAutomatico:
		return pix.ReasonOfNature(razao)
	}
	r := strings.ToLower(razao)
	switch {
	case tipoSituacao != "":
		return pix.ReasonFraud
	case strings.Contains(r, "operacional"):
		return pix.ReasonOperationalFailure
	case strings.Contains(r, "automático") || strings.Contains(r, "automatico"):
		return pix.ReasonPixAutomatico
	}
	return pix.ReasonFraud
}

// parseEfiTime reads one of Efí's date-times: RFC 3339, or, without an
// offset, São Paulo's time.
func parseEfiTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, saoPaulo); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date-time", truncate(s, 40))
}

// validInfractionID: an idInfracao is 1 to 64 letters, digits, hyphens or
// underscores (Efí's are short numbers or UUIDs), which a path segment
// carries unchanged.
func validInfractionID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

var (
	_ provider.Disputer      = (*Client)(nil)
	_ provider.ReturnsReader = (*Client)(nil)
)
