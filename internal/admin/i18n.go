package admin

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// Languages of the panel. Portuguese is the default.
const (
	langPT = "pt-BR"
	langEN = "en"
)

const langCookie = "pixgate_lang"

// lang is the language of one response; templates call its methods.
type lang struct {
	Code string
	loc  *time.Location
}

// pickLang chooses the language: ?lang= (remembered in a cookie), then the
// cookie, then Portuguese.
func pickLang(w http.ResponseWriter, r *http.Request, loc *time.Location, secure bool) lang {
	code := ""
	if q := r.URL.Query().Get("lang"); q == langPT || q == langEN {
		code = q
		//nolint:gosec // G124: Secure is set outside the sandbox, which serves plain http.
		http.SetCookie(w, &http.Cookie{Name: langCookie, Value: q, Path: "/admin/", MaxAge: 365 * 24 * 3600,
			HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode})
	} else if c, err := r.Cookie(langCookie); err == nil && (c.Value == langPT || c.Value == langEN) {
		code = c.Value
	}
	if code == "" {
		code = langPT
	}
	return lang{Code: code, loc: loc}
}

// T translates key; args fill the message's verbs. An unknown key shows
// itself, so a missing translation is visible rather than blank.
func (l lang) T(key string, args ...any) string {
	m, ok := messages[key]
	if !ok {
		return key
	}
	s := m[0]
	if l.Code == langEN {
		s = m[1]
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

// N translates key for the count n, which fills its verb: the key's ".one"
// form when n is 1 and it has one.
func (l lang) N(key string, n int64) string {
	if _, ok := messages[key+".one"]; ok && n == 1 {
		key += ".one"
	}
	return l.T(key, n)
}

// Tf is T with the arguments in a slice.
func (l lang) Tf(key string, args []any) string { return l.T(key, args...) }

// Money formats centavos as reais: R$ 1.234,56 (pt-BR) or R$ 1,234.56 (en).
func (l lang) Money(a pix.Amount) string {
	sign := ""
	if a < 0 {
		sign = "−"
	}
	if l.Code == langEN {
		return sign + "R$ " + a.Grouped(",", ".")
	}
	return sign + "R$ " + a.Grouped(".", ",")
}

// Signed formats a ledger entry with its sign: +R$ 10,00 or −R$ 10,00.
func (l lang) Signed(a pix.Amount) string {
	if a > 0 {
		return "+" + l.Money(a)
	}
	return l.Money(a)
}

// Time formats t in São Paulo time; the zero time is a dash.
func (l lang) Time(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	if l.Code == langEN {
		return t.In(l.loc).Format("2006-01-02 15:04:05")
	}
	return t.In(l.loc).Format("02/01/2006 15:04:05")
}

// Date formats a calendar date: 10/12/2026 (pt-BR) or 2026-12-10 (en);
// the zero date (a recurrence with no cycle left) is a dash.
func (l lang) Date(d pix.Date) string {
	if d.IsZero() {
		return "—"
	}
	if l.Code == langEN {
		return d.String()
	}
	return fmt.Sprintf("%02d/%02d/%04d", d.Day, int(d.Month), d.Year)
}

// DateText formats a date stored as YYYY-MM-DD text (a scheduled payout's
// scheduled_date) as Date does; text that is no date is shown as it is.
func (l lang) DateText(s string) string {
	d, err := pix.ParseDate(s)
	if err != nil {
		return s
	}
	return l.Date(d)
}

// DueTerms describes a charge's fine, interest and discounts in words.
func (l lang) DueTerms(d pix.Due) string {
	var parts []string
	switch {
	case d.Fine.PercentBP > 0:
		parts = append(parts, l.T("due.fine", l.Percent(d.Fine.PercentBP)))
	case d.Fine.Amount > 0:
		parts = append(parts, l.T("due.fine", l.Money(d.Fine.Amount)))
	}
	if d.InterestBP > 0 {
		parts = append(parts, l.T("due.interest", l.Percent(d.InterestBP)))
	}
	for _, disc := range d.Discounts {
		off := l.Money(disc.Amount)
		if disc.PercentBP > 0 {
			off = l.Percent(disc.PercentBP)
		}
		parts = append(parts, l.T("due.discount", off, l.Date(disc.Until)))
	}
	if len(parts) == 0 {
		return l.T("due.none")
	}
	return strings.Join(parts, "; ")
}

// Percent formats basis points: 1,5% (pt-BR) or 1.5% (en).
func (l lang) Percent(bp int64) string {
	s := pix.FormatPercent(bp)
	if l.Code == langPT {
		s = strings.ReplaceAll(s, ".", ",")
	}
	return s + "%"
}

// Status translates a status: templates pass it the typed statuses of
// transactions, refunds and clients and the events' delivery status, so it
// takes any value whose text is the status.
func (l lang) Status(s any) string { return l.T("status." + fmt.Sprint(s)) }

// badge is a status as its badge shows it: the code names the badge's
// style (and is its tooltip), the text is the code translated.
type badge struct{ Code, Text string }

// Badge is the badge of a status (the "status" template's argument).
func (l lang) Badge(s any) badge {
	code := fmt.Sprint(s)
	return badge{Code: code, Text: l.Status(code)}
}

// RecurrenceStatus translates a recurrence's status (a pix.RecurrenceStatus):
// a recurrence (a "recorrência") is feminine where a charge's status word
// is masculine, so a few statuses have a text of their own.
func (l lang) RecurrenceStatus(s any) string {
	if key := "recstatus." + fmt.Sprint(s); messages[key] != [2]string{} {
		return l.T(key)
	}
	return l.Status(s)
}

// RecurrenceBadge is the badge of a recurrence's status.
func (l lang) RecurrenceBadge(s any) badge {
	return badge{Code: fmt.Sprint(s), Text: l.RecurrenceStatus(s)}
}

// ItemBadge is the badge of a batch item's status: a payout (a
// "pagamento") is masculine where REJECTED's shared word is feminine.
func (l lang) ItemBadge(s any) badge {
	if key := "itemstatus." + fmt.Sprint(s); messages[key] != [2]string{} {
		return badge{Code: fmt.Sprint(s), Text: l.T(key)}
	}
	return l.Badge(s)
}

// DisputeStatus translates a dispute's status (a pix.DisputeStatus): a
// dispute (a "contestação") is feminine, and CLOSED is no charge's status.
func (l lang) DisputeStatus(s pix.DisputeStatus) string { return l.T("dispstatus." + string(s)) }

// DisputeBadge is the badge of a dispute's status.
func (l lang) DisputeBadge(s pix.DisputeStatus) badge {
	return badge{Code: string(s), Text: l.DisputeStatus(s)}
}

// Account translates the kind of a ledger account (a ledger.Kind).
func (l lang) Account(k any) string { return l.T("account." + fmt.Sprint(k)) }

// ErrorClass translates the class of a failed webhook attempt (webhook's
// Class* texts); a class without a translation shows as it is.
func (l lang) ErrorClass(class string) string {
	if _, ok := messages["errclass."+class]; !ok {
		return class
	}
	return l.T("errclass." + class)
}

// Frequency translates a recurrence's frequency (a pix.Frequency).
func (l lang) Frequency(f pix.Frequency) string { return l.T("freq." + string(f)) }

// Type translates a transaction type (a pix.TxType or its text).
func (l lang) Type(s any) string { return l.T("type." + fmt.Sprint(s)) }

// messages holds every text of the panel: key → {pt-BR, en}.
var messages = map[string][2]string{
	"app.name":                 {"pixgate · painel", "pixgate · admin"},
	"app.sandbox":              {"sandbox", "sandbox"},
	"app.production":           {"produção", "production"},
	"nav.overview":             {"Visão geral", "Overview"},
	"nav.transactions":         {"Transações", "Transactions"},
	"nav.settings":             {"Configurações", "API settings"},
	"nav.clients":              {"Clientes", "Clients"},
	"nav.statement":            {"Extrato", "Statement"},
	"nav.logout":               {"Sair", "Log out"},
	"nav.all":                  {"Todos os clientes", "All clients"},
	"nav.skip":                 {"Pular para o conteúdo", "Skip to content"},
	"nav.language":             {"Idioma", "Language"},
	"login.title":              {"Entrar", "Log in"},
	"login.email":              {"E-mail", "E-mail"},
	"login.password":           {"Senha", "Password"},
	"login.submit":             {"Entrar", "Log in"},
	"login.failed":             {"E-mail ou senha incorretos.", "Wrong e-mail or password."},
	"login.expired":            {"Sua sessão terminou. Entre novamente.", "Your session ended. Please log in again."},
	"login.loggedout":          {"Você saiu.", "You have logged out."},
	"login.hint":               {"Acesso restrito a operadores e lojistas cadastrados.", "For registered operators and merchants only."},
	"error.title":              {"Erro", "Error"},
	"error.400":                {"Pedido inválido: o texto enviado contém um byte nulo ou UTF-8 inválido.", "Bad request: the text sent contains a NUL byte or invalid UTF-8."},
	"error.404":                {"Página não encontrada.", "Page not found."},
	"error.403":                {"Formulário expirado ou inválido. Recarregue a página e tente novamente.", "This form has expired or is invalid. Reload the page and try again."},
	"error.429":                {"Muitas tentativas de login. Aguarde %d minutos e tente novamente.", "Too many login attempts. Wait %d minutes and try again."},
	"error.500":                {"Algo deu errado do nosso lado. Tente novamente.", "Something went wrong on our side. Please try again."},
	"error.back":               {"Voltar ao painel", "Back to the panel"},
	"overview.title":           {"Visão geral", "Overview"},
	"overview.all":             {"Todos os clientes", "All clients"},
	"overview.balance":         {"Saldo disponível", "Available balance"},
	"overview.pending":         {"Saldo reservado", "Reserved balance"},
	"overview.flows":           {"Movimentação de hoje", "Today's money"},
	"overview.cashin":          {"Entradas", "Money in"},
	"overview.incount.one":     {"%d cobrança paga", "%d charge paid"},
	"overview.outcount.one":    {"%d saque pago", "%d payout paid"},
	"overview.returncount.one": {"%d saque de dia anterior devolvido", "%d payout of an earlier day returned"},
	"overview.refundcount.one": {"%d devolução concluída", "%d refund completed"},
	"overview.incount":         {"%d cobranças pagas", "%d charges paid"},
	"overview.fees":            {"Tarifas", "Fees"},
	"overview.feesnote":        {"de cobranças e de saques", "on charges and payouts"},
	"overview.cashout":         {"Saídas", "Money out"},
	"overview.outcount":        {"%d saques pagos", "%d payouts paid"},
	"overview.returns":         {"Estornos de saques", "Returned payouts"},
	"overview.returncount":     {"%d saques de dias anteriores devolvidos", "%d payouts of earlier days returned"},
	"overview.refunds":         {"Devoluções", "Refunds"},
	"overview.refundcount":     {"%d devoluções concluídas", "%d refunds completed"},
	"overview.medreturns":      {"Devoluções MED", "MED returns"},
	"overview.transfersin":     {"Transferências recebidas", "Transfers in"},
	"overview.transfersout":    {"Transferências enviadas", "Transfers out"},
	"overview.splitsin":        {"Splits recebidos", "Splits in"},
	"overview.splitsout":       {"Splits enviados", "Splits out"},
	"overview.opening":         {"Saldo total às 00:00", "Total balance at 00:00"},
	"overview.closing":         {"Saldo total agora", "Total balance now"},
	"overview.flowsnote": {"Saldo total = disponível + reservado. Um saque pago e estornado no mesmo dia não é saída: só a sua tarifa fica. Saques falhos não saem.",
		"Total balance = available + reserved. A payout paid and returned on the same day is not money out: only its fee stays. Failed payouts never leave."},
	"overview.today":    {"Criadas hoje, por status", "Created today, by status"},
	"overview.none":     {"Nenhuma transação hoje.", "No transactions today."},
	"overview.failing":  {"Webhooks com falha", "Failing webhooks"},
	"overview.nofail":   {"Nenhum webhook com falha.", "No failing webhooks."},
	"overview.clients":  {"Clientes (%d)", "Clients (%d)"},
	"overview.daynote":  {"Hoje = dia corrente no horário de Brasília.", "Today = the current day in Brasília time."},
	"col.client":        {"Cliente", "Client"},
	"col.type":          {"Tipo", "Type"},
	"col.status":        {"Status", "Status"},
	"col.count":         {"Quantidade", "Count"},
	"col.amount":        {"Valor", "Amount"},
	"col.tax":           {"Tarifa", "Fee"},
	"col.created":       {"Criada em", "Created"},
	"col.id":            {"ID", "ID"},
	"col.external":      {"external_id", "external_id"},
	"col.event":         {"Evento", "Event"},
	"col.attempts":      {"Tentativas", "Attempts"},
	"col.next":          {"Próxima tentativa", "Next attempt"},
	"col.url":           {"URL", "URL"},
	"col.at":            {"Quando", "When"},
	"col.code":          {"HTTP", "HTTP"},
	"col.latency":       {"Latência", "Latency"},
	"col.error":         {"Erro", "Error"},
	"col.account":       {"Conta", "Account"},
	"col.kind":          {"Lançamento", "Posting"},
	"col.name":          {"Nome", "Name"},
	"col.env":           {"Ambiente", "Environment"},
	"col.actions":       {"Ações", "Actions"},
	"tx.title":          {"Transações", "Transactions"},
	"tx.search":         {"payment_id ou external_id", "payment_id or external_id"},
	"tx.searchbtn":      {"Buscar", "Search"},
	"tx.filter":         {"Filtrar", "Filter"},
	"tx.allstatus":      {"Todos os status", "All statuses"},
	"tx.alltypes":       {"Todos os tipos", "All types"},
	"tx.none":           {"Nenhuma transação encontrada.", "No transactions found."},
	"tx.next":           {"Próxima página →", "Next page →"},
	"tx.first":          {"← Primeira página", "← First page"},
	"tx.clear":          {"Limpar", "Clear"},
	"tx.badcursor":      {"Link de página inválido; mostrando a primeira página.", "Invalid page link; showing the first page."},
	"detail.title":      {"Transação", "Transaction"},
	"detail.summary":    {"Resumo", "Summary"},
	"detail.refunded":   {"Devolvido", "Refunded"},
	"detail.confirmed":  {"Confirmada em", "Confirmed"},
	"detail.e2e":        {"Identificador E2E do Pix", "PIX end-to-end id"},
	"detail.expires":    {"Expira em", "Expires"},
	"detail.callback":   {"URL de notificação", "Notification URL"},
	"detail.txid":       {"txid (BR Code)", "txid (BR Code)"},
	"detail.paypage":    {"Página de pagamento", "Payment page"},
	"detail.ledger":     {"Lançamentos no razão", "Ledger postings"},
	"detail.noledger":   {"Nenhum lançamento.", "No postings."},
	"detail.refunds":    {"Devoluções", "Refunds"},
	"detail.events":     {"Eventos e entregas de webhook", "Events and webhook deliveries"},
	"detail.noevents":   {"Nenhum evento.", "No events."},
	"detail.noattempts": {"Nenhuma tentativa ainda.", "No attempts yet."},
	"detail.resend":     {"Reenviar", "Resend"},
	"detail.resent":     {"Entrega agendada novamente.", "Delivery scheduled again."},
	"detail.sandbox":    {"Ações de sandbox", "Sandbox actions"},
	"detail.pay":        {"Pagar cobrança", "Pay charge"},
	"detail.expire":     {"Expirar cobrança", "Expire charge"},
	"detail.paid":       {"Cobrança paga (sandbox).", "Charge paid (sandbox)."},
	"detail.expired":    {"Cobrança expirada (sandbox).", "Charge expired (sandbox)."},
	"detail.notpayable": {"Esta cobrança não pode mais ser alterada.", "This charge can no longer be changed."},
	"detail.payload":    {"Corpo enviado", "Body sent"},
	"settings.title":    {"Configurações da API", "API settings"},
	"settings.creds":    {"Credenciais", "Credentials"},
	"settings.clientid": {"client_id (cabeçalho stpi)", "client_id (stpi header)"},
	"settings.secret":   {"client_secret (cabeçalho stps)", "client_secret (stps header)"},
	"settings.secretno": {"Guardado apenas como hash; não pode ser exibido. Gere um novo se o perdeu.", "Stored only as a hash; it cannot be shown. Generate a new one if you lost it."},
	"settings.rotate":   {"Gerar novo client_secret", "Generate a new client_secret"},
	"settings.rotatewarn": {"O secret atual deixa de funcionar imediatamente.",
		"The current secret stops working at once."},
	"settings.newsecret": {"Novo client_secret — copie agora; ele não será exibido de novo:",
		"New client_secret — copy it now; it will not be shown again:"},
	"settings.webhook":        {"Segredo de webhook", "Webhook secret"},
	"settings.whshow":         {"Mostrar segredo de webhook", "Show webhook secret"},
	"settings.whrotate":       {"Gerar novo segredo de webhook", "Generate a new webhook secret"},
	"settings.whwarn":         {"Durante 24 h os webhooks levam assinaturas com o segredo antigo e o novo.", "For 24 h webhooks carry signatures by both the old and the new secret."},
	"settings.whnew":          {"Novo segredo de webhook:", "New webhook secret:"},
	"settings.fees":           {"Tarifas", "Fees"},
	"settings.feecashin":      {"Cobranças (cash-in)", "Charges (cash-in)"},
	"settings.feepayout":      {"Pagamentos (cash-out)", "Payouts (cash-out)"},
	"settings.percent":        {"Percentual", "Percent"},
	"settings.fixed":          {"Fixo (R$)", "Fixed (R$)"},
	"settings.feesave":        {"Salvar tarifas", "Save fees"},
	"settings.feesaved":       {"Tarifas atualizadas.", "Fees updated."},
	"settings.feebad":         {"Tarifas inválidas: percentual de 0 a 100 e valor fixo de 0 a 1.000.000,00, com até duas casas decimais.", "Invalid fees: percent from 0 to 100 and fixed value from 0 to 1,000,000.00, with at most two decimals."},
	"settings.feeonly":        {"Somente operadores alteram as tarifas.", "Only operators change fees."},
	"settings.status":         {"Status do cliente", "Client status"},
	"settings.disable":        {"Desativar cliente", "Disable client"},
	"settings.disableconfirm": {"Entendo que as credenciais deste cliente deixam de funcionar imediatamente.", "I understand that this client's credentials stop working at once."},
	"settings.confirm":        {"Marque a confirmação para desativar o cliente.", "Tick the confirmation to disable the client."},
	"settings.disabled":       {"Cliente desativado: suas credenciais não funcionam mais.", "Client disabled: its credentials no longer work."},
	"settings.copy":           {"Copiar", "Copy"},
	"settings.copied":         {"Copiado!", "Copied!"},
	"clients.title":           {"Clientes", "Clients"},
	"clients.create":          {"Novo cliente", "New client"},
	"clients.name":            {"Nome", "Name"},
	"clients.submit":          {"Criar cliente", "Create client"},
	"clients.created":         {"Cliente criado. Copie as credenciais agora; o client_secret não será exibido de novo.", "Client created. Copy the credentials now; the client_secret will not be shown again."},
	"clients.badname":         {"Informe um nome de 1 a 100 caracteres.", "Enter a name of 1 to 100 characters."},
	"clients.none":            {"Nenhum cliente ainda.", "No clients yet."},
	"clients.open":            {"Abrir", "Open"},
	"status.PENDING":          {"Pendente", "Pending"},
	"status.PAID":             {"Pago", "Paid"},
	"status.CANCELLED":        {"Cancelado", "Cancelled"},
	"status.REFUNDED":         {"Devolvido", "Refunded"},
	"status.REVERSED":         {"Estornado", "Reversed"},
	"status.COMPLETED":        {"Concluído", "Completed"},
	"status.FAILED":           {"Falhou", "Failed"},
	"status.pending":          {"pendente", "pending"},
	"status.delivered":        {"entregue", "delivered"},
	"status.failed":           {"falhou", "failed"},
	"status.active":           {"ativo", "active"},
	"status.disabled":         {"desativado", "disabled"},
	"type.cashin":             {"Cobrança", "Charge"},
	"type.cashout":            {"Pagamento", "Payout"},
	"type.transfer":           {"Transferência", "Transfer"},
	"type.split":              {"Split de pagamento", "Split payment"},
	"statement.title":         {"Extrato", "Statement"},
	"statement.intro":         {"Movimentações do saldo disponível em um dia ou em um mês, no horário de Brasília: de 00:00 até 00:00 do dia seguinte ou do dia 1º do mês seguinte.", "Movements of the available balance over a day or a month, in Brasília time: from 00:00 to 00:00 of the next day or of the 1st of the next month."},
	"statement.client":        {"Cliente", "Client"},
	"statement.choose":        {"Escolha um cliente", "Choose a client"},
	"statement.day":           {"Dia", "Day"},
	"statement.month":         {"Mês", "Month"},
	"statement.format":        {"Formato", "Format"},
	"statement.byday":         {"Extrato do dia", "Statement of the day"},
	"statement.bymonth":       {"Extrato do mês", "Statement of the month"},
	"statement.period":        {"Período %s", "Period %s"},
	"statement.window":        {"De %s até %s (horário de Brasília).", "From %s to %s (Brasília time)."},
	"statement.opening":       {"Saldo disponível no início", "Available balance at the start"},
	"statement.closing":       {"Saldo disponível no fim", "Available balance at the end"},
	"statement.download":      {"Baixar extrato (%s)", "Download statement (%s)"},
	"statement.noclient":      {"Escolha um cliente.", "Choose a client."},
	"statement.noperiod":      {"Informe um dia ou um mês.", "Enter a day or a month."},
	"statement.badday":        {"Dia inválido: informe uma data como 2026-03-09, a partir do ano 2000.", "Invalid day: enter a date such as 2026-03-09, from the year 2000 on."},
	"statement.badmonth":      {"Mês inválido: informe um mês como 2026-03, a partir do ano 2000.", "Invalid month: enter a month such as 2026-03, from the year 2000 on."},
	"statement.badformat":     {"Formato inválido: escolha CSV ou JSON.", "Invalid format: choose CSV or JSON."},
	"statement.badperiod":     {"Período inválido.", "Invalid period."},

	// Unmatched receipts, suspense and paid amounts.
	"nav.unmatched":   {"Não conciliados", "Unmatched receipts"},
	"unmatched.title": {"Recebimentos não conciliados", "Unmatched receipts"},
	"unmatched.intro": {"Pix confirmados pelo PSP que nenhuma cobrança em aberto recebe: um Pix para um txid que nenhuma cobrança tem, ou um segundo Pix para uma cobrança já paga. O valor fica na conta de suspenso da casa, sem mudar o saldo de nenhum cliente, até voltar ao pagador por devolução (automática, a menos que PIXGATE_PSP_UNMATCHED=hold os retenha para um operador).",
		"Pix the PSP confirmed that no open charge takes: a Pix for a txid no charge holds, or a second Pix for a charge already paid. The money stays in the house's suspense account, moving no client's balance, until it goes back to the payer by devolução (automatically, unless PIXGATE_PSP_UNMATCHED=hold keeps them for an operator)."},
	"unmatched.received":            {"Recebido em", "Received"},
	"unmatched.pix":                 {"Pix", "Pix"},
	"unmatched.what":                {"O que aconteceu", "What happened"},
	"unmatched.reason.no_charge":    {"Pix sem cobrança", "Pix for no charge"},
	"unmatched.reason.already_paid": {"Segundo Pix de uma cobrança já paga", "Second Pix for a paid charge"},
	"unmatched.charge":              {"Ver a cobrança", "See the charge"},
	"unmatched.failed":              {"A última devolução falhou: %s", "The last return failed: %s"},
	"unmatched.return":              {"Devolver ao pagador", "Return to payer"},
	"unmatched.returning":           {"Devolução iniciada: o valor volta ao pagador quando o PSP a concluir.", "Return started: the money goes back to the payer once the PSP completes it."},
	"unmatched.notheld":             {"Este recebimento já está sendo devolvido ou já foi devolvido.", "This receipt is already being returned or was returned."},
	"unmatched.none":                {"Nenhum recebimento não conciliado.", "No unmatched receipts."},
	"unmatched.full":                {"Mostrando os %d mais recentes; filtre por status para ver outros.", "Showing the newest %d; filter by status to see others."},
	"status.HELD":                   {"Retido", "Held"},
	"status.RETURNING":              {"Devolvendo", "Returning"},
	"status.RETURNED":               {"Devolvido ao pagador", "Returned"},
	"suspense.title":                {"Dinheiro em suspenso", "Money in suspense"},
	"suspense.balance":              {"Saldo em suspenso", "Balance in suspense"},
	"suspense.held":                 {"Aguardando um operador", "Held for an operator"},
	"suspense.heldcount":            {"%d recebimentos", "%d receipts"},
	"suspense.heldcount.one":        {"%d recebimento", "%d receipt"},
	"suspense.heldmany":             {"%d ou mais recebimentos", "%d or more receipts"},
	"suspense.link":                 {"Ver os recebimentos não conciliados", "See the unmatched receipts"},
	"detail.paidamount":             {"Valor pago", "Paid amount"},
	"detail.mismatch":               {"valor divergente", "amount differs"},
	"detail.mismatchnote":           {"Pago com um valor diferente do cobrado: o saldo recebeu o valor pago, menos a tarifa calculada sobre ele.", "Paid with an amount other than the charge's: the balance got the amount paid, less the fee computed on it."},
	"tx.mismatch":                   {"pago %s", "paid %s"},

	// A charge with a due date on its detail page.
	"due.date":         {"Vencimento", "Due date"},
	"due.lastday":      {"Pagável até", "Payable until"},
	"due.terms":        {"Condições", "Terms"},
	"due.fine":         {"multa de %s", "fine of %s"},
	"due.interest":     {"juros de %s ao mês", "interest of %s a month"},
	"due.discount":     {"desconto de %s até %s", "discount of %s until %s"},
	"due.none":         {"sem multa, juros ou desconto", "no fine, interest or discount"},
	"due.today":        {"Valor devido hoje", "Amount due today"},
	"due.notpayable":   {"— (não pode mais ser paga)", "— (can no longer be paid)"},
	"due.expected":     {"Devido no dia do pagamento", "Due on the day it was paid"},
	"due.mismatchnote": {"Pago com um valor diferente do devido naquele dia: o saldo recebeu o valor pago, menos a tarifa calculada sobre ele.", "Paid with an amount other than was due that day: the balance got the amount paid, less the fee computed on it."},

	// Pix Automático recurrences.
	"nav.recurrences": {"Recorrências", "Recurrences"},
	"rec.title":       {"Recorrências (Pix Automático)", "Recurrences (Pix Automático)"},
	"rec.intro": {"Autorizações que o pagador dá uma vez no app do banco; a cobrança de cada ciclo é debitada no vencimento. Mais recentes primeiro.",
		"Authorizations the payer gives once in their bank's app; each cycle's charge is debited on its due date. Newest first."},
	"rec.one":                       {"Recorrência", "Recurrence"},
	"rec.allclients":                {"Todos os clientes", "All clients"},
	"rec.none":                      {"Nenhuma recorrência encontrada.", "No recurrences found."},
	"rec.payer":                     {"Pagador", "Payer"},
	"rec.document":                  {"CPF/CNPJ do pagador", "Payer's CPF/CNPJ"},
	"rec.frequency":                 {"Periodicidade", "Frequency"},
	"rec.nextdue":                   {"Próximo vencimento", "Next due date"},
	"rec.terms":                     {"Termos", "Terms"},
	"rec.contract":                  {"Contrato", "Contract"},
	"rec.description":               {"Descrição", "Description"},
	"rec.start":                     {"Primeiro vencimento", "Start date"},
	"rec.end":                       {"Último vencimento possível", "End date"},
	"rec.noend":                     {"sem data final (até ser cancelada)", "none (until cancelled)"},
	"rec.retry":                     {"Novas tentativas", "Retries"},
	"rec.retry.NONE":                {"nenhuma: um débito que falha cancela o ciclo", "none: a failed debit cancels the cycle"},
	"rec.retry.THREE_IN_SEVEN_DAYS": {"até 3 em 7 dias (1º, 3º e 5º dia após o vencimento)", "up to 3 in 7 days (1st, 3rd and 5th day after the due date)"},
	"rec.first":                     {"Primeiro pagamento", "First payment"},
	"rec.pspid":                     {"Identificador no PSP (idRec)", "PSP id (idRec)"},
	"rec.updated":                   {"Atualizada em", "Updated"},
	"rec.cycles":                    {"Ciclos", "Cycles"},
	"rec.cycle":                     {"Ciclo", "Cycle"},
	"rec.nocycles":                  {"Nenhuma cobrança de ciclo criada ainda.", "No cycle charge created yet."},
	"rec.cyclesnote": {"A cobrança de cada ciclo é criada entre 10 e 2 dias antes do vencimento e é uma cobrança comum: abra-a para ver lançamentos e webhooks.",
		"Each cycle's charge is created between 10 and 2 days before its due date and is an ordinary charge: open it for its postings and webhooks."},
	"rec.retryon":       {"nova tentativa em %s", "retry on %s"},
	"rec.back":          {"← Recorrências do cliente", "← The client's recurrences"},
	"rec.by.merchant":   {"pelo lojista", "by the merchant"},
	"rec.by.payer":      {"pelo pagador", "by the payer"},
	"detail.recurrence": {"Recorrência", "Recurrence"},
	"freq.WEEKLY":       {"Semanal", "Weekly"},
	"freq.MONTHLY":      {"Mensal", "Monthly"},
	"freq.QUARTERLY":    {"Trimestral", "Quarterly"},
	"freq.SEMIANNUAL":   {"Semestral", "Semiannual"},
	"freq.ANNUAL":       {"Anual", "Annual"},
	"status.CREATED":    {"Aguardando o pagador", "Awaiting the payer"},
	"status.APPROVED":   {"Autorizada", "Approved"},
	"status.REJECTED":   {"Recusada", "Rejected"},
	"status.EXPIRED":    {"Expirada", "Expired"},
	"status.FINISHED":   {"Encerrada", "Finished"},
	// A recurrence's own word where a charge's is masculine.
	"recstatus.CANCELLED": {"Cancelada", "Cancelled"},

	// Batches and scheduled payouts (docs/payouts.md).
	"nav.batches":           {"Lotes", "Batches"},
	"nav.scheduled":         {"Agendados", "Scheduled"},
	"batch.title":           {"Lotes de pagamentos", "Payout batches"},
	"batch.one":             {"Lote", "Batch"},
	"batch.intro":           {"Lotes de até 1.000 Pix enviados de uma vez; cada item é um pagamento comum. Mais recentes primeiro.", "Batches of up to 1,000 Pix sent at once; each item is an ordinary payout. Newest first."},
	"batch.none":            {"Nenhum lote encontrado.", "No batches found."},
	"batch.total":           {"Itens", "Items"},
	"batch.accepted":        {"Aceitos", "Accepted"},
	"batch.rejected":        {"Recusados", "Rejected"},
	"batch.counts":          {"Situação dos itens", "Items by status"},
	"batch.error":           {"Erro", "Error"},
	"batch.back":            {"← Lotes do cliente", "← The client's batches"},
	"batch.state.accepting": {"Em aceitação", "Being accepted"},
	"batch.state.accepted":  {"Em andamento", "In progress"},
	"batch.state.completed": {"Concluído", "Completed"},
	"sched.title":           {"Pagamentos agendados", "Scheduled payouts"},
	"sched.intro":           {"Pix com data marcada (calendário de São Paulo): nada é reservado até o dia; no início do dia o valor e a tarifa são reservados e o Pix é enviado. Dia mais distante primeiro.", "Pix for a set date (São Paulo calendar): nothing is reserved until that day; as it begins, amount and fee are reserved and the Pix is sent. Latest day first."},
	"sched.none":            {"Nenhum pagamento agendado encontrado.", "No scheduled payouts found."},
	"sched.date":            {"Data", "Date"},
	"sched.state":           {"Agendamento", "Schedule"},
	"sched.state.scheduled": {"Aguardando o dia", "Waiting for its day"},
	"sched.state.started":   {"Iniciado", "Started"},
	"sched.state.cancelled": {"Cancelado", "Cancelled"},
	"sched.state.failed":    {"Falhou: saldo insuficiente", "Failed: insufficient balance"},
	"itemstatus.REJECTED":   {"Recusado", "Rejected"},
	"status.SCHEDULED":      {"Agendado", "Scheduled"},

	// MED disputes (docs/med.md).
	"nav.disputes": {"Contestações", "Disputes"},
	"disp.title":   {"Contestações (MED)", "Disputes (MED)"},
	"disp.intro": {"Pix recebidos que o banco do pagador contestou pelo Mecanismo Especial de Devolução. O valor fica bloqueado até o PSP decidir; defenda-se pela API antes do prazo. Mais recentes primeiro.",
		"Received Pix the payer's bank contested under the Special Return Mechanism. The amount stays blocked until the PSP decides; defend through the API before the deadline. Newest first."},
	"disp.allclients":                 {"Todos os clientes", "All clients"},
	"disp.none":                       {"Nenhuma contestação encontrada.", "No disputes found."},
	"disp.opened":                     {"Aberta em", "Opened"},
	"disp.charge":                     {"Cobrança", "Charge"},
	"disp.reason":                     {"Motivo", "Reason"},
	"disp.respondby":                  {"Prazo de defesa", "Respond by"},
	"disp.outcome":                    {"Resultado", "Outcome"},
	"disp.defense":                    {"Defesa", "Defense"},
	"disp.soon":                       {"vence em menos de 24 h", "due within 24 h"},
	"disp.overdue":                    {"prazo vencido", "overdue"},
	"disp.reason.FRAUD":               {"Fraude", "Fraud"},
	"disp.reason.OPERATIONAL_FAILURE": {"Falha operacional", "Operational failure"},
	"disp.reason.PIX_AUTOMATICO":      {"Pix Automático", "Pix Automático"},
	"disp.outcome.released":           {"Liberada ao lojista", "Released to the merchant"},
	"disp.outcome.returned":           {"Devolvida ao pagador", "Returned to the payer"},
	"disp.returned":                   {"devolvido %s", "%s returned"},
	"disp.accepted":                   {"Aceita", "Accepted"},
	"disp.contested":                  {"Contestada", "Contested"},
	"disp.defendedat":                 {"em %s", "on %s"},
	"dispstatus.OPEN":                 {"Aberta", "Open"},
	"dispstatus.CLOSED":               {"Encerrada", "Closed"},

	// Ledger accounts (ledger.Kind) and the classes of failed webhook
	// attempts (webhook.Class*), as the ledger and the attempts show them.
	"account.available":                   {"Disponível", "Available"},
	"account.pending":                     {"Reservado", "Pending"},
	"account.settlement":                  {"Liquidação", "Settlement"},
	"account.fees":                        {"Tarifas", "Fees"},
	"account.suspense":                    {"Em suspenso", "Suspense"},
	"account.blocked":                     {"Bloqueado (MED)", "Blocked (MED)"},
	"account.debt":                        {"Dívida (MED)", "Debt (MED)"},
	"account.clearing":                    {"Compensação entre contas", "Clearing between accounts"},
	"errclass.DNS resolution failed":      {"falha na resolução de DNS", "DNS resolution failed"},
	"errclass.connection refused":         {"conexão recusada", "connection refused"},
	"errclass.connection reset":           {"conexão interrompida", "connection reset"},
	"errclass.timeout":                    {"tempo esgotado", "timeout"},
	"errclass.TLS error":                  {"erro de TLS", "TLS error"},
	"errclass.destination not allowed":    {"destino não permitido", "destination not allowed"},
	"errclass.redirect refused":           {"redirecionamento recusado", "redirect refused"},
	"errclass.invalid response":           {"resposta inválida", "invalid response"},
	"errclass.connection failed":          {"falha na conexão", "connection failed"},
	"errclass.HTTP 3xx":                   {"HTTP 3xx (redirecionamento)", "HTTP 3xx"},
	"errclass.HTTP 4xx":                   {"HTTP 4xx (recusado pelo receptor)", "HTTP 4xx"},
	"errclass.HTTP 5xx":                   {"HTTP 5xx (erro do receptor)", "HTTP 5xx"},
	"errclass.signing secret unavailable": {"segredo de assinatura indisponível", "signing secret unavailable"},
	"errclass.signing failed":             {"falha ao assinar", "signing failed"},

	// The PSP on the operators' overview.
	"psp.title":           {"PSP", "PSP"},
	"psp.state":           {"Estado", "State"},
	"psp.up":              {"respondendo", "answering"},
	"psp.down":            {"sem resposta na última chamada", "no answer to the last call"},
	"psp.lastsuccess":     {"Última chamada com resposta", "Last call answered"},
	"psp.lastfailure":     {"Última falha", "Last failure"},
	"psp.fail.timeout":    {"tempo esgotado", "timeout"},
	"psp.fail.tls":        {"erro de TLS (certificado)", "TLS error (certificate)"},
	"psp.fail.refused":    {"conexão recusada", "connection refused"},
	"psp.fail.dns":        {"erro de DNS", "DNS error"},
	"psp.fail.connection": {"erro de conexão", "connection error"},
	"psp.fail.http5xx":    {"HTTP 5xx", "HTTP 5xx"},
	"psp.fail.auth":       {"autenticação recusada", "authentication refused"},
	"psp.fail.badanswer":  {"resposta inválida", "invalid answer"},
	"psp.fail.other":      {"outro erro", "other error"},
	"psp.webhook":         {"Webhook no PSP", "Webhook at the PSP"},
	"psp.webhook.ours":    {"desta instalação", "this deployment's"},
	"psp.webhook.other":   {"de outra instalação", "another deployment's"},
	"psp.webhook.none":    {"nenhum", "none"},
	"psp.webhook.unknown": {"ainda não lido", "not read yet"},
	"psp.alert.other": {"O PSP envia as notificações de Pix a outra instalação (mesma conta no PSP). Os pagamentos ainda são creditados pela leitura periódica do PSP. Dê a cada instalação a sua própria conta e reinicie esta para registrar o webhook de novo.",
		"The PSP sends its Pix notifications to another deployment (same PSP account). Payments are still credited by reading the PSP periodically. Give each deployment its own account and restart this one to register the webhook again."},
	"psp.alert.none": {"O PSP não tem webhook registrado para a chave: as notificações de Pix não chegam. Os pagamentos ainda são creditados pela leitura periódica do PSP. Reinicie o pixgate para registrá-lo de novo.",
		"The PSP holds no webhook for the key: Pix notifications reach no one. Payments are still credited by reading the PSP periodically. Restart pixgate to register it again."},

	// Marketplaces: a parent's sub-accounts (docs/marketplace.md).
	"nav.accounts":   {"Subcontas", "Sub-accounts"},
	"accounts.title": {"Subcontas", "Sub-accounts"},
	"accounts.intro": {"As subcontas que este cliente criou pela API (POST /api/v1/accounts), mais recentes primeiro, com o saldo disponível de cada uma. Abra uma para ver a visão geral e as transações; aqui elas são somente leitura.",
		"The sub-accounts this client created through the API (POST /api/v1/accounts), newest first, with each one's available balance. Open one to see its overview and transactions; here they are read-only."},
	"accounts.none":     {"Nenhuma subconta.", "No sub-accounts."},
	"accounts.sub":      {"subconta", "sub-account"},
	"accounts.subof":    {"Subconta de", "Sub-account of"},
	"accounts.readonly": {"Somente leitura", "Read-only"},
	"accounts.more":     {"e mais %d subcontas", "and %d more sub-accounts"},
	"accounts.more.one": {"e mais %d subconta", "and %d more sub-account"},
	"col.document":      {"CPF/CNPJ", "CPF/CNPJ"},
	"col.available":     {"Disponível", "Available"},
}
