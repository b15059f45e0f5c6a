package pspsim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file is the one pattern every API handler follows: decode the body
// (400 when it is not JSON), check the request (400 with its violations),
// look the resource up by id under s.mu (BACEN's problem+json 404 when it
// is not there), guard its status (400 naming the status), then act and
// answer.

// resource is what the handlers of one kind of resource answer when a
// request about it is refused (400) and when it is not there (404).
type resource struct {
	// noun names it in details ("the <noun> is …") and prop prefixes the
	// violations' propriedade ("<prop>.status").
	noun, prop string
	// refused and refusedTitle are the type and title of a 400.
	refused, refusedTitle string
	// missing, missingTitle and missingDetail make the 404.
	missing, missingTitle, missingDetail string
}

// notFound answers k's 404.
func (k resource) notFound(w http.ResponseWriter) {
	writeProblem(w, http.StatusNotFound, k.missing, k.missingTitle, k.missingDetail, nil)
}

// refuse answers k's 400 with detail and the violations v.
func (k resource) refuse(w http.ResponseWriter, detail string, v ...violacao) {
	writeProblem(w, http.StatusBadRequest, k.refused, k.refusedTitle, detail, v)
}

// decode reads r's JSON body into v; false after answering 400 with k's
// problem type when it is not one JSON object.
func (k resource) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	return decodeBody(w, r, k.refused, v)
}

// validTxID reports whether txid is 26 to 35 of [a-zA-Z0-9]; false after
// answering k's 400.
func (k resource) validTxID(w http.ResponseWriter, txid string) bool {
	if isAlnum(txid, 26, 35) {
		return true
	}
	k.refuse(w, "txid must be 26 to 35 of [a-zA-Z0-9]",
		violacao{Razao: "txid must match ^[a-zA-Z0-9]{26,35}$", Propriedade: k.prop + ".txid", Valor: txid})
	return false
}

// onlyStatus reports whether a revision sets status to want and nothing
// else (others: it sets something else); false after answering k's 400
// with detail.
func (k resource) onlyStatus(w http.ResponseWriter, status *string, want string, others bool, detail string) bool {
	if status != nil && *status == want && !others {
		return true
	}
	k.refuse(w, detail, violacao{Razao: "status can only be revised to " + want + ", alone", Propriedade: k.prop + ".status"})
	return false
}

// statusGuard is an operation that only some statuses of a resource allow.
type statusGuard struct {
	allowed []string
	// verb ends the refusal's detail: "the cob is CONCLUIDA and can no
	// longer be <verb>".
	verb string
	// razao is the refusal's one violation, of <prop>.status.
	razao string
}

// permits reports whether status is one that lets g's operation through.
func (g statusGuard) permits(status string) bool { return slices.Contains(g.allowed, status) }

// allows reports whether status lets g's operation through; false after
// answering k's 400 naming the status.
func (k resource) allows(w http.ResponseWriter, status string, g statusGuard) bool {
	if g.permits(status) {
		return true
	}
	k.refuseStatus(w, status, "the "+k.noun+" is "+status+" and can no longer be "+g.verb, g.razao)
	return false
}

// refuseStatus answers k's 400 with detail and one violation, razao, of the
// resource's status.
func (k resource) refuseStatus(w http.ResponseWriter, status, detail, razao string) {
	k.refuse(w, detail, violacao{Razao: razao, Propriedade: k.prop + ".status", Valor: status})
}

// found returns v, or nil after answering k's 404 when there is no v (the
// caller looked it up under s.mu).
func found[V any](w http.ResponseWriter, k resource, v *V) *V {
	if v == nil {
		k.notFound(w)
	}
	return v
}

// show answers a GET of one resource: under s.mu, 200 with view of what
// get finds, or k's 404 when it finds nothing.
func show[V, J any](s *Server, w http.ResponseWriter, k resource, get func() *V, view func(*V) J) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := found(w, k, get()); v != nil {
		writeJSON(w, http.StatusOK, view(v))
	}
}

// answerThenNotify runs change under s.mu; when it succeeds (it answers its
// own refusals) the answer is status with its body, then its notifications
// are delivered.
func (s *Server) answerThenNotify(w http.ResponseWriter, r *http.Request, status int, change func() (any, []notice, bool)) {
	s.mu.Lock()
	body, notes, ok := change()
	s.mu.Unlock()
	if !ok {
		return
	}
	writeJSON(w, status, body)
	s.deliverNotices(r.Context(), notes)
}

// violations collects the broken rules of a request, in the order found.
type violations []violacao

func (v *violations) add(prop, reason, val string) {
	*v = append(*v, violacao{Razao: reason, Propriedade: prop, Valor: val})
}

// checkPerson adds the violations of a debtor's document (a CPF or a
// CNPJ, not both) and name (at most maxNome characters) under prop.
func (v *violations) checkPerson(prop, cpf, cnpj, nome string, maxNome int) {
	switch {
	case cpf != "" && cnpj != "":
		v.add(prop, "give cpf or cnpj, not both", "")
	case cpf != "" && (len(cpf) != 11 || !allDigits(cpf)):
		v.add(prop+".cpf", "cpf must be 11 digits", cpf)
	case cnpj != "" && !isCNPJ(cnpj):
		v.add(prop+".cnpj", "cnpj must be 14 characters of [0-9A-Z]", cnpj)
	case cpf == "" && cnpj == "":
		v.add(prop, "devedor needs cpf or cnpj", "")
	}
	if strings.TrimSpace(nome) == "" || utf8.RuneCountInString(nome) > maxNome {
		v.add(prop+".nome", fmt.Sprintf("nome is required, at most %d characters", maxNome), nome)
	}
}

// checkAddress adds the violation of an address too long for the API.
func (v *violations) checkAddress(prop, logradouro, cidade, uf, cep string) {
	if utf8.RuneCountInString(logradouro) > 200 || utf8.RuneCountInString(cidade) > 200 || len(uf) > 2 || len(cep) > 8 {
		v.add(prop, "logradouro and cidade are at most 200 characters, uf 2, cep 8", "")
	}
}

// checkText adds the violation of an optional text over maxLen characters.
func (v *violations) checkText(prop, name string, text *string, maxLen int) {
	if text != nil && utf8.RuneCountInString(*text) > maxLen {
		v.add(prop, fmt.Sprintf("%s is at most %d characters", name, maxLen), "")
	}
}

func isCNPJ(s string) bool {
	if len(s) != 14 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
