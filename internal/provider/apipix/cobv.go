package apipix

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// Wire shapes of a cobv (charge with a due date), reduced to the fields
// used.

type cobvRequest struct {
	Calendario         cobvCalendario `json:"calendario"`
	Devedor            cobvDevedor    `json:"devedor"`
	Valor              cobvValor      `json:"valor"`
	Chave              string         `json:"chave"`
	SolicitacaoPagador string         `json:"solicitacaoPagador,omitempty"`
}

type cobvCalendario struct {
	DataDeVencimento       string `json:"dataDeVencimento"`
	ValidadeAposVencimento int    `json:"validadeAposVencimento"`
}

type cobvDevedor struct {
	CPF        string `json:"cpf,omitempty"`
	CNPJ       string `json:"cnpj,omitempty"`
	Nome       string `json:"nome"`
	Logradouro string `json:"logradouro,omitempty"`
	Cidade     string `json:"cidade,omitempty"`
	UF         string `json:"uf,omitempty"`
	CEP        string `json:"cep,omitempty"`
}

type cobvValor struct {
	Original string        `json:"original"`
	Multa    *modalidade   `json:"multa,omitempty"`
	Juros    *modalidade   `json:"juros,omitempty"`
	Desconto *cobvDesconto `json:"desconto,omitempty"`
}

// modalidade is a multa or juros: a kind and a value in reais or percent.
type modalidade struct {
	Modalidade int    `json:"modalidade"`
	ValorPerc  string `json:"valorPerc"`
}

type cobvDesconto struct {
	Modalidade       int                `json:"modalidade"`
	DescontoDataFixa []descontoDataFixa `json:"descontoDataFixa"`
}

type descontoDataFixa struct {
	Data      string `json:"data"`
	ValorPerc string `json:"valorPerc"`
}

type cobvAnswer struct {
	TxID       string `json:"txid"`
	Status     string `json:"status"`
	Calendario struct {
		DataDeVencimento string `json:"dataDeVencimento"`
	} `json:"calendario"`
	Valor         cobValor  `json:"valor"`
	PixCopiaECola string    `json:"pixCopiaECola"`
	Pix           []pixWire `json:"pix"`
}

// The API Pix's modalidades used for pixgate's terms (BACEN's tables).
const (
	multaFixed           = 1 // Valor Fixo
	multaPercent         = 2 // Percentual
	jurosPercentMonth    = 3 // Percentual ao mês (dias corridos)
	descontoFixedUntil   = 1 // Valor Fixo até a[s] data[s] informada[s]
	descontoPercentUntil = 2 // Percentual até a data informada
)

// Lengths of the devedor's fields in the API.
const (
	maxName    = 200
	maxAddress = 200
)

// cobvBody maps a DueCharge to the API's cobv: the due date and the days it
// stays payable after it; multa modalidade 2 (percent) or 1 (fixed);
// juros modalidade 3 (percent a month, calendar days); desconto modalidade
// 1 (fixed amounts) or 2 (percentages) until fixed dates; the devedor with
// its address.
func (c *Client) cobvBody(ch provider.DueCharge) (cobvRequest, error) {
	if !validTxID(ch.TxID) {
		return cobvRequest{}, errors.New("txid must be 26 to 35 letters and digits")
	}
	if ch.Amount <= 0 {
		return cobvRequest{}, errors.New("amount must be positive")
	}
	d := ch.Due
	if d.Date.IsZero() || d.DaysAfter < 0 {
		return cobvRequest{}, errors.New("a due date and a non-negative validity are required")
	}
	p := ch.Payer
	if strings.TrimSpace(p.Name) == "" {
		return cobvRequest{}, errors.New("the payer's name is required")
	}
	dev := cobvDevedor{
		Nome:       truncate(p.Name, maxName),
		Logradouro: truncate(street(p.Street, p.Number), maxAddress),
		Cidade:     truncate(p.City, maxAddress),
		UF:         p.State,
		CEP:        p.ZipCode,
	}
	switch {
	case pix.ValidCPF(p.Document):
		dev.CPF = p.Document
	case pix.ValidCNPJ(p.Document):
		dev.CNPJ = p.Document
	default:
		return cobvRequest{}, errors.New("the payer's document must be a CPF or a CNPJ")
	}
	if dev.UF != "" && !pix.ValidUF(dev.UF) || dev.CEP != "" && !pix.ValidCEP(dev.CEP) {
		return cobvRequest{}, errors.New("the payer's UF or CEP is malformed")
	}
	v := cobvValor{Original: ch.Amount.String()}
	switch {
	case d.Fine.PercentBP > 0:
		v.Multa = &modalidade{Modalidade: multaPercent, ValorPerc: percent(d.Fine.PercentBP)}
	case d.Fine.Amount > 0:
		v.Multa = &modalidade{Modalidade: multaFixed, ValorPerc: d.Fine.Amount.String()}
	}
	if d.InterestBP > 0 {
		v.Juros = &modalidade{Modalidade: jurosPercentMonth, ValorPerc: percent(d.InterestBP)}
	}
	if len(d.Discounts) > 0 {
		v.Desconto = &cobvDesconto{Modalidade: descontoFixedUntil}
		if d.Discounts[0].PercentBP > 0 {
			v.Desconto.Modalidade = descontoPercentUntil
		}
		for _, disc := range d.Discounts {
			val := disc.Amount.String()
			if disc.PercentBP > 0 {
				val = percent(disc.PercentBP)
			}
			v.Desconto.DescontoDataFixa = append(v.Desconto.DescontoDataFixa, descontoDataFixa{Data: disc.Until.String(), ValorPerc: val})
		}
	}
	return cobvRequest{
		Calendario:         cobvCalendario{DataDeVencimento: d.Date.String(), ValidadeAposVencimento: d.DaysAfter},
		Devedor:            dev,
		Valor:              v,
		Chave:              c.pixKey,
		SolicitacaoPagador: truncate(ch.Question, maxText),
	}, nil
}

// street is the logradouro: "street, number" (either may be missing).
func street(s, n string) string {
	s, n = strings.TrimSpace(s), strings.TrimSpace(n)
	switch {
	case s == "":
		return n
	case n == "":
		return s
	}
	return s + ", " + n
}

// percent writes basis points as the API's valorPerc: 250 → "2.50".
func percent(bp int64) string { return pix.Amount(bp).String() }

// CreateDueCharge creates the cobv ch.TxID with PUT /cobv/{txid} and
// returns its pixCopiaECola verbatim, all within the charge timeout.
func (c *Client) CreateDueCharge(ctx context.Context, ch provider.DueCharge) (string, error) {
	body, err := c.cobvBody(ch)
	if err != nil {
		return "", fmt.Errorf("%s: create due charge %s: %s: %w", c.name, truncate(ch.TxID, 40), err.Error(), provider.ErrRejected)
	}
	ctx, cancel := context.WithTimeout(ctx, c.chargeTimeout)
	defer cancel()
	u := c.cobvURL(ch.TxID)
	var ans cobvAnswer
	// PUT /cobv/{txid} is idempotent by txid: a retry after an unknown
	// outcome at worst meets the cobv the first attempt created.
	unknown, err := c.exec(ctx, Request{Method: http.MethodPut, URL: u, Body: body, Idempotent: true}, &ans)
	if err != nil {
		if !unknown || !errors.Is(err, provider.ErrRejected) {
			return "", fmt.Errorf("create due charge: %w", err)
		}
		// The retry was refused, perhaps because the first attempt did
		// create the cobv: if it exists with our amount and due date, it
		// is ours.
		var got cobvAnswer
		if _, gerr := c.exec(ctx, Request{Method: http.MethodGet, URL: u, Idempotent: true}, &got); gerr != nil ||
			!sameAmount(got.Valor.Original, ch.Amount) || got.Calendario.DataDeVencimento != body.Calendario.DataDeVencimento ||
			got.PixCopiaECola == "" {
			return "", fmt.Errorf("create due charge: %w", err)
		}
		c.log.Info("cobv found after a retried PUT was refused", "txid", ch.TxID)
		ans = got
	}
	if ans.PixCopiaECola == "" {
		return "", fmt.Errorf("%s: create due charge %s: answer without pixCopiaECola", c.name, ch.TxID)
	}
	return ans.PixCopiaECola, nil
}

// DueChargePayments reads GET /cobv/{txid} and returns the Pix paid to it,
// each for the amount the PSP received.
func (c *Client) DueChargePayments(ctx context.Context, txid string) ([]provider.Payment, error) {
	var ans cobvAnswer
	if err := c.Do(ctx, Request{Method: http.MethodGet, URL: c.cobvURL(txid), Idempotent: true}, &ans); err != nil {
		return nil, fmt.Errorf("due charge payments: %w", err)
	}
	out := make([]provider.Payment, 0, len(ans.Pix))
	for _, w := range ans.Pix {
		if w.TxID == "" {
			w.TxID = txid
		}
		if w.TxID != txid {
			return nil, fmt.Errorf("%s: due charge payments %s: a Pix for txid %q", c.name, txid, truncate(w.TxID, 40))
		}
		p, err := toPayment(w)
		if err != nil {
			return nil, fmt.Errorf("%s: due charge payments %s: %w", c.name, txid, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// CancelDueCharge removes the cobv with PATCH /cobv/{txid}. As with a cob,
// a refusal is read back (GET /cobv): one removed already, by an earlier
// PATCH whose answer was lost, is success.
func (c *Client) CancelDueCharge(ctx context.Context, txid string) error {
	err := c.Do(ctx, Request{
		Method:     http.MethodPatch,
		URL:        c.cobvURL(txid),
		Body:       map[string]string{"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"},
		Idempotent: true,
	}, nil)
	if errors.Is(err, provider.ErrRejected) {
		var ans cobvAnswer
		if gerr := c.Do(ctx, Request{Method: http.MethodGet, URL: c.cobvURL(txid), Idempotent: true}, &ans); gerr == nil &&
			(ans.Status == "REMOVIDA_PELO_USUARIO_RECEBEDOR" || ans.Status == "REMOVIDA_PELO_PSP") {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("cancel due charge: %w", err)
	}
	return nil
}

func (c *Client) cobvURL(txid string) string { return c.api + "/cobv/" + url.PathEscape(txid) }

var _ provider.DueCharger = (*Client)(nil)
