package provider

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// Naturezas of a devolução, as BACEN's API Pix names them (DevolucaoNatureza):
// ORIGINAL and RETIRADA are asked for by the receiver; the MED ones are
// imposed by the scheme (docs/med.md).
const (
	NatureOriginal       = "ORIGINAL"
	NatureWithdrawal     = "RETIRADA"
	NatureMEDFraud       = "MED_FRAUDE"
	NatureMEDOperational = "MED_OPERACIONAL"
	// NatureMEDPixAutomatico is the MED refund of a Pix Automático.
	NatureMEDPixAutomatico = "MED_PIX_AUTOMATICO"
)

// ReturnsReader is what a PSP that lists its received Pix having a
// devolução offers: the way returns nobody announced (MED) are found when
// a webhook is lost.
type ReturnsReader interface {
	// ReceivedWithReturns returns every received Pix in [from, to) having
	// a devolução (GET /pix?inicio&fim&devolucaoPresente=true, all pages),
	// each with its Refunds filled (ID = the devolução id as the PSP gives
	// it, Status, Amount = valor, Nature = natureza, EndToEndID = rtrId).
	ReceivedWithReturns(ctx context.Context, from, to time.Time) ([]Payment, error)
}

// InfractionStatus is where an infraction (a MED contest) stands at the PSP.
type InfractionStatus string

// Statuses of an infraction.
const (
	// InfractionOpen: under analysis; the merchant may defend until RespondBy.
	InfractionOpen InfractionStatus = "open"
	// InfractionReleased: closed, the contest failed or was cancelled: the
	// block is lifted.
	InfractionReleased InfractionStatus = "released"
	// InfractionAccepted: closed, the contest held: a MED devolução follows
	// (read as a return).
	InfractionAccepted InfractionStatus = "accepted"
)

// Infraction is a MED contest of a received Pix, as the PSP reports it.
type Infraction struct {
	// ID is the PSP's id (Efí's idInfracao).
	ID string
	// EndToEndID is the contested received Pix.
	EndToEndID string
	// Amount is the contested amount; 0 when the PSP does not say (the
	// caller uses the Pix's amount).
	Amount pix.Amount
	// Reason is read from the PSP's motivo or tipo.
	Reason    pix.DisputeReason
	Status    InfractionStatus
	RespondBy time.Time // the defense deadline
	OpenedAt  time.Time
	// Defense is the justification of the defense the PSP holds, "" when
	// it holds none.
	Defense string
}

// Disputer is what a PSP that reports its infractions and takes defenses
// offers (efi).
type Disputer interface {
	// Infractions returns every infraction created or changed in [from,
	// to) (all pages).
	Infractions(ctx context.Context, from, to time.Time) ([]Infraction, error)
	// Defend sends the merchant's defense: accept (analise "aceito") or
	// reject ("rejeitado") with justification. ErrRejected: refused;
	// ErrNotFound: unknown id; any other error: outcome unknown.
	Defend(ctx context.Context, infractionID string, accept bool, justification string) error
}
