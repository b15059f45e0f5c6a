package pspsim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Statuses of the API Pix and of Efí's send API.
const (
	CobAtiva      = "ATIVA"
	CobConcluida  = "CONCLUIDA"
	CobRemovidaUR = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
	CobRemovidaPS = "REMOVIDA_PELO_PSP"

	EmProcessamento = "EM_PROCESSAMENTO"
	Devolvido       = "DEVOLVIDO"
	Realizado       = "REALIZADO"
	NaoRealizado    = "NAO_REALIZADO"
)

// Magic values that make a transfer fail when it settles.
const (
	// FailRefundDescription as a devolução's descricao makes it NAO_REALIZADO.
	FailRefundDescription = "psp:fail"
	// FailKeySuffix ending a send's favorecido chave makes it NAO_REALIZADO.
	FailKeySuffix = "@fail.psp"
)

// ispb is the simulated participants' ISPB in end-to-end ids.
const ispb = "99999999"

// state is the simulated PSP's books; Server.mu guards it.
type state struct {
	cobs       map[string]*cob
	cobvs      map[string]*cobv   // made at the first PUT /cobv
	pix        map[string]*pixRec // by endToEndId
	pixOrder   []*pixRec
	refunds    map[string]*refund // by e2eid + "/" + id
	sends      map[string]*send   // by idEnvio
	sendOrder  []*send            // by request time, for the list of sent Pix
	sendPuts   map[string]Count
	refundPuts map[string]Count
	tokens     map[string]time.Time // access token → expiry
	webhook    *webhookReg
	recs       *recBooks // Pix Automático, made at first use
	nextLoc    int64
}

func newState() state {
	return state{cobs: map[string]*cob{}, pix: map[string]*pixRec{}, refunds: map[string]*refund{},
		sends: map[string]*send{}, sendPuts: map[string]Count{}, refundPuts: map[string]Count{},
		tokens: map[string]time.Time{}, nextLoc: 1000}
}

type devedor struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome"`
}

type cob struct {
	TxID        string
	Created     time.Time
	Expiracao   int
	Revisao     int
	LocID       int64
	Location    string
	Status      string
	Devedor     *devedor
	Valor       int64 // centavos
	Chave       string
	Solicitacao string
	BRCode      string
	Pix         []*pixRec
}

type pixRec struct {
	E2EID       string
	TxID        string
	Valor       int64
	Chave       string
	Horario     time.Time
	InfoPagador string
	Refunds     []*refund
	// Pagador is who paid, reported with the Pix (record fills it in).
	Pagador *devedor
}

type refund struct {
	ID        string
	E2EID     string
	RtrID     string
	Valor     int64
	Descricao string
	Requested time.Time
	Settled   time.Time
	Status    string
}

type send struct {
	IDEnvio     string
	E2EID       string
	Valor       int64
	PagadorKey  string
	InfoPagador string
	Favorecido  string
	Requested   time.Time
	Settled     time.Time
	Status      string
}

type webhookReg struct {
	URL      string
	Created  time.Time
	SkipMTLS bool
}

// timeFormat is RFC 3339 in UTC with milliseconds, as PSPs write it.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// formatValor writes centavos as the API's decimal string: 2590 → "25.90".
func formatValor(c int64) string {
	return fmt.Sprintf("%d.%02d", c/100, c%100)
}

// parseValor reads `^\d{1,10}\.\d{2}$` into centavos.
func parseValor(s string) (int64, bool) {
	reais, cents, ok := strings.Cut(s, ".")
	if !ok || len(reais) < 1 || len(reais) > 10 || len(cents) != 2 || !allDigits(reais) || !allDigits(cents) {
		return 0, false
	}
	r, err := strconv.ParseInt(reais, 10, 64)
	if err != nil {
		return 0, false
	}
	c, _ := strconv.ParseInt(cents, 10, 64)
	return r*100 + c, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isAlnum(s string, minLen, maxLen int) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// newE2EID returns a 32-character end-to-end id: prefix ("E" for a payment,
// "D" for a return), ISPB, yyyyMMddHHmm and 11 random characters.
func newE2EID(prefix string, at time.Time) string {
	return prefix + ispb + at.UTC().Format("200601021504") + randomAlnum(11)
}

// JSON shapes of the API.

type cobJSON struct {
	Calendario         calendarioJSON `json:"calendario"`
	TxID               string         `json:"txid"`
	Revisao            int            `json:"revisao"`
	Loc                locJSON        `json:"loc"`
	Location           string         `json:"location"`
	Status             string         `json:"status"`
	Devedor            *devedor       `json:"devedor,omitempty"`
	Valor              valorJSON      `json:"valor"`
	Chave              string         `json:"chave"`
	SolicitacaoPagador string         `json:"solicitacaoPagador,omitempty"`
	PixCopiaECola      string         `json:"pixCopiaECola"`
	Pix                []pixJSON      `json:"pix,omitempty"`
}

type calendarioJSON struct {
	Criacao   string `json:"criacao"`
	Expiracao int    `json:"expiracao"`
}

type locJSON struct {
	ID       int64  `json:"id"`
	Location string `json:"location"`
	TipoCob  string `json:"tipoCob"`
	Criacao  string `json:"criacao"`
	TxID     string `json:"txid"`
}

type valorJSON struct {
	Original string `json:"original"`
}

type pixJSON struct {
	EndToEndID  string         `json:"endToEndId"`
	TxID        string         `json:"txid,omitempty"`
	Valor       string         `json:"valor"`
	Chave       string         `json:"chave,omitempty"`
	Horario     string         `json:"horario"`
	InfoPagador string         `json:"infoPagador,omitempty"`
	Devolucoes  []refundJSON   `json:"devolucoes,omitempty"`
	Componentes *componentJSON `json:"componentesValor,omitempty"`
	// Pagador is the payer: API Pix 2.0's field, which PSPs such as Efí
	// still send though later versions of the schema dropped it.
	Pagador *devedor `json:"pagador,omitempty"`
}

type componentJSON struct {
	Original struct {
		Valor string `json:"valor"`
	} `json:"original"`
}

type refundJSON struct {
	ID        string      `json:"id"`
	RtrID     string      `json:"rtrId"`
	Valor     string      `json:"valor"`
	Natureza  string      `json:"natureza"`
	Descricao string      `json:"descricao,omitempty"`
	Horario   horarioJSON `json:"horario"`
	Status    string      `json:"status"`
	Motivo    string      `json:"motivo,omitempty"`
}

type horarioJSON struct {
	Solicitacao string `json:"solicitacao"`
	Liquidacao  string `json:"liquidacao,omitempty"`
}

func (c *cob) json() cobJSON {
	created := formatTime(c.Created)
	j := cobJSON{
		Calendario: calendarioJSON{Criacao: created, Expiracao: c.Expiracao},
		TxID:       c.TxID, Revisao: c.Revisao,
		Loc:      locJSON{ID: c.LocID, Location: c.Location, TipoCob: "cob", Criacao: created, TxID: c.TxID},
		Location: c.Location, Status: c.Status, Devedor: c.Devedor,
		Valor: valorJSON{Original: formatValor(c.Valor)}, Chave: c.Chave,
		SolicitacaoPagador: c.Solicitacao, PixCopiaECola: c.BRCode,
	}
	for _, p := range c.Pix {
		j.Pix = append(j.Pix, p.json())
	}
	return j
}

func (p *pixRec) json() pixJSON {
	j := pixJSON{EndToEndID: p.E2EID, TxID: p.TxID, Valor: formatValor(p.Valor), Chave: p.Chave,
		Horario: formatTime(p.Horario), InfoPagador: p.InfoPagador, Componentes: &componentJSON{}, Pagador: p.Pagador}
	j.Componentes.Original.Valor = j.Valor
	for _, r := range p.Refunds {
		j.Devolucoes = append(j.Devolucoes, r.json())
	}
	return j
}

func (r *refund) json() refundJSON {
	j := refundJSON{ID: r.ID, RtrID: r.RtrID, Valor: formatValor(r.Valor), Natureza: "ORIGINAL", Descricao: r.Descricao,
		Horario: horarioJSON{Solicitacao: formatTime(r.Requested)}, Status: r.Status}
	if !r.Settled.IsZero() {
		j.Horario.Liquidacao = formatTime(r.Settled)
	}
	if r.Status == NaoRealizado {
		j.Motivo = "Devolução recusada pelo simulador"
	}
	return j
}

type sendPartyJSON struct {
	Chave       string `json:"chave"`
	InfoPagador string `json:"infoPagador,omitempty"`
}

type sendJSON struct {
	EndToEndID string        `json:"endToEndId"`
	IDEnvio    string        `json:"idEnvio"`
	Valor      string        `json:"valor"`
	Chave      string        `json:"chave"`
	Status     string        `json:"status"`
	Horario    horarioJSON   `json:"horario"`
	Pagador    sendPartyJSON `json:"pagador"`
	Favorecido sendPartyJSON `json:"favorecido"`
}

// sentPixJSON is Efí's webhook report of a send that settled: one item
// of the same pix array as received Pix, told apart by tipo SOLICITACAO
// and gnExtras.idEnvio.
type sentPixJSON struct {
	EndToEndID string       `json:"endToEndId"`
	Chave      string       `json:"chave"`
	Tipo       string       `json:"tipo"`
	Status     string       `json:"status"`
	Valor      string       `json:"valor"`
	Horario    *string      `json:"horario"`
	GnExtras   sentExtrasJS `json:"gnExtras"`
}

// sentExtrasJS is a sent Pix's gnExtras: its idEnvio and, when it failed,
// why.
type sentExtrasJS struct {
	IDEnvio string       `json:"idEnvio"`
	Erro    *sentErrorJS `json:"erro,omitempty"`
}

type sentErrorJS struct {
	Codigo string `json:"codigo"`
	Origem string `json:"origem"`
	Motivo string `json:"motivo"`
}

// report is the webhook's report of s, settled.
func (s *send) report() sentPixJSON {
	r := sentPixJSON{EndToEndID: s.E2EID, Chave: s.Favorecido, Tipo: "SOLICITACAO", Status: s.Status, Valor: formatValor(s.Valor),
		GnExtras: sentExtrasJS{IDEnvio: s.IDEnvio}}
	if s.Status == NaoRealizado {
		r.GnExtras.Erro = &sentErrorJS{Codigo: "AC03", Origem: "PSP do usuário recebedor", Motivo: "Conta do recebedor inválida"}
	} else {
		h := formatTime(s.Settled)
		r.Horario = &h
	}
	return r
}

func (s *send) json() sendJSON {
	j := sendJSON{EndToEndID: s.E2EID, IDEnvio: s.IDEnvio, Valor: formatValor(s.Valor), Chave: s.PagadorKey, Status: s.Status,
		Horario: horarioJSON{Solicitacao: formatTime(s.Requested)},
		Pagador: sendPartyJSON{Chave: s.PagadorKey, InfoPagador: s.InfoPagador}, Favorecido: sendPartyJSON{Chave: s.Favorecido}}
	if !s.Settled.IsZero() {
		j.Horario.Liquidacao = formatTime(s.Settled)
	}
	return j
}
