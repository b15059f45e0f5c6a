// Package brcode owns the Pix BR Code: the "copia e cola" text of a Pix QR
// code as BACEN's Manual de Padrões para Iniciação do Pix defines it on top
// of EMV MPM (Merchant-Presented Mode) TLVs. It builds static codes for a
// receiving key (Encode), parses and re-encodes any BR Code (Parse, Code),
// computes the CRC-16/CCITT-FALSE of field 63 (CRC16) and draws the
// transaction ids that tie a payment to its charge (NewTxID).
//
// The package is pure: no I/O besides the io.Reader given to NewTxID, and no
// import of any other package of this module.
package brcode

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
)

// Errors returned by this package; the concrete error wraps one of them with
// the detail, so callers test with errors.Is.
var (
	// ErrInvalidPayload: Encode was given a Payload it cannot turn into a
	// valid BR Code.
	ErrInvalidPayload = errors.New("brcode: invalid payload")
	// ErrMalformed: Parse met text that is not a well-formed BR Code (TLV
	// structure, field 00 or field 63).
	ErrMalformed = errors.New("brcode: malformed BR Code")
	// ErrChecksum: the CRC in field 63 does not match the text before it.
	ErrChecksum = errors.New("brcode: CRC mismatch")
	// ErrNotPix: Code.Payload found a well-formed code that is not a static
	// Pix code in BRL with a receiving key.
	ErrNotPix = errors.New("brcode: not a static Pix BR Code")
)

// GUI is the globally unique identifier of the Pix arrangement, sub-field 00
// of the merchant account information template (field 26).
const GUI = "br.gov.bcb.pix"

// TxIDLen is the length of the transaction ids NewTxID draws.
const TxIDLen = 25

// MaxAmount is the largest amount, in centavos, field 54 can hold: 13
// characters, "9999999999.99".
const MaxAmount int64 = 999_999_999_999

// Payload is the typed content of a static Pix BR Code.
type Payload struct {
	// Key is the receiving Pix key (field 26, sub-field 01).
	Key string
	// Description is an optional free text for the payer (field 26,
	// sub-field 02); empty means absent.
	Description string
	// MerchantName is the receiver's name (field 59, at most 25 characters).
	MerchantName string
	// MerchantCity is the receiver's city (field 60, at most 15 characters).
	MerchantCity string
	// Amount is the amount in centavos (field 54); 0 means absent, the
	// payer then chooses it.
	Amount int64
	// TxID is the transaction id (field 62, sub-field 05): 1 to 25
	// characters of [A-Za-z0-9], or "***" for none.
	TxID string
}

// txidChars is the alphabet of transaction ids; 62 symbols.
const txidChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// NewTxID returns TxIDLen characters drawn uniformly from [A-Za-z0-9], reading
// bytes from rand (crypto/rand.Reader when rand is nil). Bytes of 248 and
// above are rejected so that every character is equally likely (248 = 4*62).
func NewTxID(rand io.Reader) (string, error) {
	if rand == nil {
		rand = cryptoRand
	}
	var out [TxIDLen]byte
	var buf [32]byte
	n := 0
	for n < TxIDLen {
		if _, err := io.ReadFull(rand, buf[:]); err != nil {
			return "", fmt.Errorf("brcode: reading randomness: %w", err)
		}
		for _, c := range buf {
			if c >= 248 {
				continue
			}
			out[n] = txidChars[c%62]
			n++
			if n == TxIDLen {
				break
			}
		}
	}
	return string(out[:]), nil
}

// cryptoRand is the default randomness source of NewTxID.
var cryptoRand io.Reader = rand.Reader

// validTxID reports whether s may go into field 62/05: "***" or 1 to 25
// characters of [A-Za-z0-9].
func validTxID(s string) bool {
	if s == "***" {
		return true
	}
	if len(s) == 0 || len(s) > TxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// validKey reports whether s can be a Pix key in a BR Code: non-empty,
// printable ASCII without spaces. Whether it is a valid CPF, CNPJ, e-mail,
// phone or EVP is the domain's check, not this package's.
func validKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c > 0x7E {
			return false
		}
	}
	return true
}
