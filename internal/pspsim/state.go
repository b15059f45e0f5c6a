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
	recs       *recBooks              // Pix Automático, made at first use
	infracoes  map[string]*infraction // Efí's MED infractions, by idInfracao
	infOrder   []*infraction          // by creation, for the list
	nextLoc    int64
}

func newState() state {
	return state{cobs: map[string]*cob{}, pix: map[string]*pixRec{}, refunds: map[string]*refund{},
		sends: map[string]*send{}, sendPuts: map[string]Count{}, refundPuts: map[string]Count{},
		tokens: map[string]time.Time{}, infracoes: map[string]*infraction{}, nextLoc: 1000}
}

type devedor struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome"`
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

type horarioJSON struct {
	Solicitacao string `json:"solicitacao"`
	Liquidacao  string `json:"liquidacao,omitempty"`
}
