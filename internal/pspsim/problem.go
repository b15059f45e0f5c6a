package pspsim

import (
	"encoding/json"
	"io"
	"net/http"
)

// problemBase is the prefix of the API Pix's error types.
const problemBase = "https://pix.bcb.gov.br/api/v2/error/"

// violacao is one broken rule of a refused request.
type violacao struct {
	Razao       string `json:"razao"`
	Propriedade string `json:"propriedade"`
	Valor       string `json:"valor,omitempty"`
}

// problem is an RFC 7807 answer, as the API Pix writes them.
type problem struct {
	Type      string     `json:"type"`
	Title     string     `json:"title"`
	Status    int        `json:"status"`
	Detail    string     `json:"detail,omitempty"`
	Violacoes []violacao `json:"violacoes,omitempty"`
}

// writeProblem answers status with a problem of type typ (its last path
// segment, e.g. "CobNaoEncontrado").
func writeProblem(w http.ResponseWriter, status int, typ, title, detail string, v []violacao) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(problem{Type: problemBase + typ, Title: title, Status: status, Detail: detail, Violacoes: v})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// maxBody bounds a request body: the API's largest is a cob of a few KB.
const maxBody = 64 << 10

// decodeBody reads r's JSON body into v; false after answering 400 with a
// problem of type typ when it is not one JSON object.
func decodeBody(w http.ResponseWriter, r *http.Request, typ string, v any) bool {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		writeProblem(w, http.StatusBadRequest, typ, "Requisição inválida", "the body is not a valid JSON object: "+err.Error(), nil)
		return false
	}
	return true
}
