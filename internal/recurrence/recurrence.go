package recurrence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// Messages of recurrences' errors.
const (
	msgNoRecurrences       = "Recurrences are not available with this provider"
	msgRecurrenceNotFound  = "Recurrence not found"
	msgRecurrenceRefused   = "The payment provider refused the recurrence"
	msgRecurrenceFinalized = "Recurrence is %s and can no longer be cancelled"
)

// Created is the 201 body of a created recurrence (and of its
// replays), statusCode aside.
type Created struct {
	RecurrenceID   string               `json:"recurrence_id"`
	ExternalID     string               `json:"external_id"`
	Status         pix.RecurrenceStatus `json:"status"`
	QRCode         string               `json:"qrcode"`
	QRCodeImage    string               `json:"qrcode_image"`
	Frequency      pix.Frequency        `json:"frequency"`
	Amount         pix.Amount           `json:"amount"`
	StartDate      pix.Date             `json:"start_date"`
	EndDate        *pix.Date            `json:"end_date"`
	Retry          pix.RetryPolicy      `json:"retry"`
	NextDueDate    *pix.Date            `json:"next_due_date"`
	FirstPayment   *pix.Amount          `json:"first_payment"`
	FirstPaymentID *string              `json:"first_payment_id"`
	// Splits are the recurrence's splits as requested, [] without any.
	Splits []SplitTerm `json:"splits"`
}

// View is a recurrence as GET and cancel show it: its summary, its
// splits and its cycles' charges.
type View struct {
	Summary
	// Splits are the recurrence's splits as requested, [] without any;
	// the list's Summary leaves them out so that a page costs one query.
	Splits  []SplitTerm `json:"splits"`
	Charges []CycleView `json:"charges"`
}

// SplitTerm is one entry of a recurrence's splits as the request gave
// it: an account_id and exactly one of percent or amount, both JSON
// numbers with at most two decimals.
type SplitTerm struct {
	AccountID string       `json:"account_id"`
	Percent   *percentJSON `json:"percent,omitempty"`
	Amount    *pix.Amount  `json:"amount,omitempty"`
}

// percentJSON is a split's percent in hundredths of a percent, written
// as the request's number (1050 → 10.5) so that no float holds it.
type percentJSON int64

// MarshalJSON writes p as a JSON number of percent.
func (p percentJSON) MarshalJSON() ([]byte, error) { return []byte(pix.FormatPercent(int64(p))), nil }

// splitTerms is the API view of a recurrence's stored splits, [] for none.
func splitTerms(ss []pix.Split) []SplitTerm {
	out := make([]SplitTerm, len(ss))
	for i, s := range ss {
		out[i].AccountID = s.AccountID
		if s.Amount > 0 {
			a := s.Amount
			out[i].Amount = &a
		} else {
			p := percentJSON(s.Percent)
			out[i].Percent = &p
		}
	}
	return out
}

// Summary is a recurrence without its charges, as the list
// shows each one.
type Summary struct {
	RecurrenceID   string               `json:"recurrence_id"`
	ExternalID     string               `json:"external_id"`
	Status         pix.RecurrenceStatus `json:"status"`
	CancelledBy    *pix.CancelledBy     `json:"cancelled_by"`
	Payer          pix.RecurrencePayer  `json:"payer"`
	Contract       string               `json:"contract"`
	Description    string               `json:"description"`
	Frequency      pix.Frequency        `json:"frequency"`
	Amount         pix.Amount           `json:"amount"`
	StartDate      pix.Date             `json:"start_date"`
	EndDate        *pix.Date            `json:"end_date"`
	Retry          pix.RetryPolicy      `json:"retry"`
	NextDueDate    *pix.Date            `json:"next_due_date"`
	FirstPayment   *pix.Amount          `json:"first_payment"`
	FirstPaymentID *string              `json:"first_payment_id"`
	CreatedAt      string               `json:"created_at"`
	UpdatedAt      string               `json:"updated_at"`
}

// CycleView is one cycle's charge in a View.
type CycleView struct {
	PaymentID string       `json:"payment_id"`
	DueDate   pix.Date     `json:"due_date"`
	Amount    pix.Amount   `json:"amount"`
	Status    pix.TxStatus `json:"status"`
	Attempts  int          `json:"attempts"`
}

func optDate(d pix.Date) *pix.Date {
	if d.IsZero() {
		return nil
	}
	return &d
}

func optFirst(r pix.Recurrence) (*pix.Amount, *string) {
	if r.FirstPayment <= 0 {
		return nil, nil
	}
	a, id := r.FirstPayment, r.FirstPaymentID
	return &a, &id
}

// nextDue is the next_due_date shown: none once no cycle is left or the
// recurrence is final (pix.Recurrence.UpcomingDue).
func nextDue(r pix.Recurrence) *pix.Date { return optDate(r.UpcomingDue()) }

// recurrenceCreated is the 201 body of r, whose stored splits are splits.
func (s *Service) recurrenceCreated(r pix.Recurrence, splits []pix.Split) (Created, error) {
	image, err := s.qr.Base64PNG(r.QRCode)
	if err != nil {
		return Created{}, fmt.Errorf("recurrence: render QR: %w", err)
	}
	first, firstID := optFirst(r)
	return Created{RecurrenceID: r.ID, ExternalID: r.ExternalID, Status: pix.RecurrenceCreated, QRCode: r.QRCode,
		QRCodeImage: image, Frequency: r.Schedule.Frequency, Amount: r.Amount, StartDate: r.Schedule.Start,
		EndDate: optDate(r.Schedule.End), Retry: r.Retry, NextDueDate: optDate(r.Schedule.Start),
		FirstPayment: first, FirstPaymentID: firstID, Splits: splitTerms(splits)}, nil
}

// storedCreated is the 201 body of r, a recurrence already stored, as a
// replay answers it: its splits read back.
func (s *Service) storedCreated(ctx context.Context, r pix.Recurrence) (Created, error) {
	splits, err := s.db.Splits(ctx, r.ID)
	if err != nil {
		return Created{}, fmt.Errorf("recurrence %s: %w", r.ID, err)
	}
	return s.recurrenceCreated(r, splits)
}

// SummaryOf is the API view of r without its charges.
func SummaryOf(r pix.Recurrence) Summary {
	first, firstID := optFirst(r)
	v := Summary{RecurrenceID: r.ID, ExternalID: r.ExternalID, Status: r.Status, Payer: r.Payer, Contract: r.Contract,
		Description: r.Description, Frequency: r.Schedule.Frequency, Amount: r.Amount, StartDate: r.Schedule.Start,
		EndDate: optDate(r.Schedule.End), Retry: r.Retry, NextDueDate: nextDue(r), FirstPayment: first, FirstPaymentID: firstID,
		CreatedAt: pix.FormatTime(r.CreatedAt), UpdatedAt: pix.FormatTime(r.UpdatedAt)}
	if r.Status == pix.RecurrenceCancelled {
		by := r.CancelledBy
		v.CancelledBy = &by
	}
	return v
}

// ViewOf is the API view of r with its splits and its cycles' charges.
func ViewOf(r pix.Recurrence, splits []pix.Split, cycles []pix.CycleCharge) View {
	v := View{Summary: SummaryOf(r), Splits: splitTerms(splits), Charges: make([]CycleView, 0, len(cycles))}
	for _, c := range cycles {
		v.Charges = append(v.Charges, CycleView{PaymentID: c.PaymentID, DueDate: c.DueDate, Amount: c.Amount, Status: c.Status, Attempts: c.Attempts})
	}
	return v
}

// recurrer is the provider's recurrences, or the 422 of a provider
// without them.
func (s *Service) recurrer() (provider.Recurrer, error) {
	rec, ok := s.psp.(provider.Recurrer)
	if !ok {
		return nil, pix.Errorf(pix.EUnprocessable, msgNoRecurrences)
	}
	return rec, nil
}

// Create validates r and registers the recurrence for client c
// at the PSP, or replays the one already created with the same
// external_id or Idempotency-Key (in holds both, and the request's digest
// they are compared by). Errors: EInvalid (with details),
// EIdempotencyMismatch, EUnprocessable (no recurrences with this provider,
// or the PSP refused it), EProviderUnavailable.
func (s *Service) Create(ctx context.Context, c pix.Client, in pix.Idempotent[pix.RecurrenceRequest]) (Created, bool, error) {
	r, key, hash := in.Req, in.Key, in.Hash
	terms, found := r.Parse(s.clocks.Today(ctx))
	is := issues(found)
	if key != "" && !pix.ValidIdempotencyKey(key) {
		is.add("Idempotency-Key", "must be 1 to 255 visible ASCII characters")
	}
	s.webhookURL(&is, "postbackUrl", r.PostbackURL)
	if err := is.err(); err != nil {
		// start_date is checked against today: a retry, days later, of a
		// request accepted then replays it rather than fail.
		if hash != "" {
			if prev, ok, _ := s.findRecurrence(ctx, c.ID, r.ExternalID, key); ok && prev.RequestHash == hash {
				resp, rerr := s.storedCreated(ctx, prev)
				return resp, rerr == nil, rerr
			}
		}
		return Created{}, false, err
	}
	if hash == "" {
		return Created{}, false, pix.InvalidBody()
	}
	rec, err := s.recurrer()
	if err != nil {
		return Created{}, false, err
	}
	if prev, ok, err := s.findRecurrence(ctx, c.ID, r.ExternalID, key); err != nil {
		return Created{}, false, fmt.Errorf("create recurrence: %w", err)
	} else if ok {
		return s.replayRecurrence(ctx, prev, hash, r.ExternalID)
	}
	var splits []pix.Split
	if len(terms.Splits) > 0 {
		if splits, err = s.cashin.ResolveSplits(ctx, c, "splits", terms.Splits); err != nil {
			return Created{}, false, err
		}
	}

	now := s.clocks.At(ctx)
	row := pix.Recurrence{ID: s.w.NewID(), ClientID: c.ID, ExternalID: terms.ExternalID, IdempotencyKey: key, RequestHash: hash,
		Status: pix.RecurrenceCreated, Payer: terms.Payer, Contract: terms.Contract, Description: terms.Description,
		Schedule: terms.Schedule, Amount: terms.Amount, Retry: terms.Retry, FirstPayment: terms.FirstPayment,
		CallbackURL: r.PostbackURL, NextDue: terms.Schedule.Start, CreatedAt: now, UpdatedAt: now}
	first, err := s.firstPayment(ctx, c, r, terms, hash, row.ID, now)
	if err != nil {
		return Created{}, false, err
	}
	row.FirstPaymentID = first.ID
	created, err := rec.CreateRecurrence(ctx, provider.Recurrence{Payer: terms.Payer, Contract: terms.Contract,
		Description: terms.Description, Schedule: terms.Schedule, Amount: terms.Amount, Retry: terms.Retry,
		FirstPayment: terms.FirstPayment, FirstTxID: first.TxID, FirstTTL: s.chargeTTL})
	if err != nil {
		if errors.Is(err, provider.ErrUnsupported) {
			s.log.WarnContext(ctx, "recurrences are not configured at the PSP", "error", err.Error())
			return Created{}, false, pix.Errorf(pix.EUnprocessable, msgNoRecurrences)
		}
		if errors.Is(err, provider.ErrRejected) {
			s.log.WarnContext(ctx, "the PSP refused a recurrence", "error", err.Error())
			return Created{}, false, pix.Errorf(pix.EUnprocessable, msgRecurrenceRefused)
		}
		s.log.WarnContext(ctx, "the PSP did not create a recurrence", "error", err.Error())
		return Created{}, false, pix.Errorf(pix.EProviderUnavailable, "Payment provider unavailable")
	}
	row.PSPID, row.QRCode = created.ID, created.QRCode
	first.QRCode = created.QRCode
	inserted, err := s.storeRecurrence(ctx, row, first, splits)
	if err != nil || !inserted {
		// A concurrent duplicate won the insert (or the write failed): the
		// recurrence just registered is withdrawn, nobody saw its code.
		s.withdrawRecurrence(ctx, rec, created.ID, first.TxID)
		if err != nil {
			return Created{}, false, fmt.Errorf("create recurrence: %w", err)
		}
		prev, ok, err := s.findRecurrence(ctx, c.ID, r.ExternalID, key)
		if err == nil && !ok {
			err = fmt.Errorf("recurrence %s conflicted with no visible row", row.ID)
		}
		if err != nil {
			return Created{}, false, fmt.Errorf("create recurrence: %w", err)
		}
		return s.replayRecurrence(ctx, prev, hash, r.ExternalID)
	}
	if first.TxID != "" {
		s.cashin.Stored(ctx, first.TxID, false, true)
	}
	resp, err := s.recurrenceCreated(row, splits)
	return resp, false, err
}

// storeRecurrence stores recurrence row, its first payment (if any) and
// the splits both of them carry, in one transaction; it reports false
// when a duplicate holds row's keys.
func (s *Service) storeRecurrence(ctx context.Context, row pix.Recurrence, first pix.Transaction, splits []pix.Split) (bool, error) {
	inserted := false
	err := s.db.Write(ctx, func(tx *store.Tx) error {
		ok, err := tx.InsertRecurrence(ctx, row)
		if err != nil || !ok {
			return err
		}
		inserted = true
		if err := tx.InsertSplits(ctx, row.ID, splits); err != nil {
			return err
		}
		if first.ID == "" {
			return nil
		}
		if err := tx.CreateTransaction(ctx, first); err != nil {
			return err
		}
		return tx.InsertSplits(ctx, first.ID, splits)
	})
	return inserted, err
}

// firstPayment is the journey-3 first payment of recurrence rowID (none
// when its terms ask for none), its cob's intent committed.
func (s *Service) firstPayment(ctx context.Context, c pix.Client, r *pix.RecurrenceRequest, terms pix.RecurrenceTerms, hash, rowID string,
	now time.Time) (pix.Transaction, error) {
	if terms.FirstPayment <= 0 {
		return pix.Transaction{}, nil
	}
	txid, err := s.cashin.NewTxID()
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("create recurrence: %w", err)
	}
	details, err := json.Marshal(struct {
		Payer       pix.RecurrencePayer `json:"payer"`
		Description string              `json:"description"`
	}{terms.Payer, terms.Description})
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("create recurrence: %w", err)
	}
	first := pix.NewCashIn(s.w.NewID(), c, terms.FirstPayment, txid, now, now.Add(s.chargeTTL))
	first.RequestHash, first.CallbackURL, first.Details, first.RecurrenceID = hash, r.PostbackURL, string(details), rowID
	// As a charge's: a first payment's cob left by a crash is withdrawn.
	if err := s.cashin.Intend(ctx, txid, c.ID, now, false); err != nil {
		return pix.Transaction{}, fmt.Errorf("create recurrence: %w", err)
	}
	return first, nil
}

// withdrawRecurrence cancels at the PSP a recurrence no row holds, and
// its first payment's cob. Best effort: an unanswered recurrence expires
// on its own, and the sweep withdraws the cob.
func (s *Service) withdrawRecurrence(ctx context.Context, rec provider.Recurrer, pspID, firstTxID string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cashin.PSPCallTimeout)
	defer cancel()
	if err := rec.CancelRecurrence(cctx, pspID); err != nil {
		s.log.WarnContext(ctx, "could not withdraw a recurrence no row holds; it expires unanswered", "psp_id", pspID, "error", err.Error())
	}
	if firstTxID != "" {
		s.cashin.Stored(ctx, firstTxID, false, false)
	}
}

// replayRecurrence answers a create request whose key matched prev.
func (s *Service) replayRecurrence(ctx context.Context, prev pix.Recurrence, hash, externalID string) (Created, bool, error) {
	if prev.RequestHash != hash {
		return Created{}, false, pix.Mismatch(pix.ByExternalID(prev.ExternalID, externalID))
	}
	resp, err := s.storedCreated(ctx, prev)
	return resp, err == nil, err
}

// findRecurrence returns client's recurrence created with externalID or
// with the idempotency key, if either was given and exists.
func (s *Service) findRecurrence(ctx context.Context, clientID, externalID, key string) (pix.Recurrence, bool, error) {
	if externalID != "" {
		r, err := s.db.RecurrenceByExternalID(ctx, clientID, externalID)
		if err == nil || !errors.Is(err, store.ErrNotFound) {
			return r, err == nil, err
		}
	}
	if key != "" {
		r, err := s.db.RecurrenceByIdempotencyKey(ctx, clientID, key)
		if err == nil || !errors.Is(err, store.ErrNotFound) {
			return r, err == nil, err
		}
	}
	return pix.Recurrence{}, false, nil
}

// loadRecurrence returns client c's recurrence id. Errors: ENotFound.
func (s *Service) loadRecurrence(ctx context.Context, c pix.Client, id string) (pix.Recurrence, error) {
	if !pix.CanonicalID(id) {
		return pix.Recurrence{}, pix.Errorf(pix.ENotFound, msgRecurrenceNotFound)
	}
	r, err := s.db.Recurrence(ctx, c.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return pix.Recurrence{}, pix.Errorf(pix.ENotFound, msgRecurrenceNotFound)
	}
	if err != nil {
		return pix.Recurrence{}, fmt.Errorf("recurrence: %w", err)
	}
	return r, nil
}

// Get returns client c's recurrence id with its cycles' charges.
// Errors: ENotFound.
func (s *Service) Get(ctx context.Context, c pix.Client, id string) (View, error) {
	r, err := s.loadRecurrence(ctx, c, id)
	if err != nil {
		return View{}, err
	}
	return s.recurrenceView(ctx, r)
}

func (s *Service) recurrenceView(ctx context.Context, r pix.Recurrence) (View, error) {
	splits, err := s.db.Splits(ctx, r.ID)
	if err != nil {
		return View{}, fmt.Errorf("recurrence %s: %w", r.ID, err)
	}
	cycles, err := s.db.CycleCharges(ctx, r.ID)
	if err != nil {
		return View{}, fmt.Errorf("recurrence %s: %w", r.ID, err)
	}
	return ViewOf(r, splits, cycles), nil
}

// Cancel cancels client c's recurrence id as its receiver: at
// the PSP first (the recurrence, then each cycle charge not yet paid),
// then here, with pix.recurrence.cancelled (cancelled_by merchant) and
// pix.cashin.cancelled for each cycle charge withdrawn. A cycle charge the
// PSP no longer lets go of (its debit is under way) stays PENDING and ends
// as its debit does. Errors: ENotFound, EUnprocessable (the recurrence is
// final), EProviderUnavailable.
func (s *Service) Cancel(ctx context.Context, c pix.Client, id string) (View, error) {
	r, err := s.loadRecurrence(ctx, c, id)
	if err != nil {
		return View{}, err
	}
	if !r.Status.Cancellable() {
		return View{}, pix.Errorf(pix.EUnprocessable, msgRecurrenceFinalized, r.Status)
	}
	rec, err := s.recurrer()
	if err != nil {
		return View{}, err
	}
	unavailable := func(what string, err error) (View, error) {
		s.log.WarnContext(ctx, "the PSP did not cancel a "+what, "recurrence", r.ID, "error", err.Error())
		return View{}, pix.Errorf(pix.EProviderUnavailable, "Payment provider unavailable")
	}
	if err := rec.CancelRecurrence(ctx, r.PSPID); err != nil {
		if !errors.Is(err, provider.ErrRejected) {
			return unavailable("recurrence", err)
		}
		// The PSP keeps it: it was answered meanwhile. Take its word.
		if err := s.Sync(ctx, r.PSPID); err != nil {
			return unavailable("recurrence", err)
		}
		if r, err = s.loadRecurrence(ctx, c, id); err != nil {
			return View{}, err
		}
		return View{}, pix.Errorf(pix.EUnprocessable, msgRecurrenceFinalized, r.Status)
	}
	withdrawn, err := s.withdrawCycles(ctx, rec, r)
	if err != nil {
		return unavailable("cycle charge", err)
	}
	if r.FirstPaymentID != "" {
		if t, err := s.db.TransactionByID(ctx, r.FirstPaymentID); err == nil && t.Status == pix.StatusPending {
			if err := s.cashin.CancelAtPSP(ctx, t.TxID, false); err != nil && !errors.Is(err, provider.ErrNotFound) {
				return unavailable("first payment", err)
			}
			withdrawn = append(withdrawn, t.ID)
		}
	}
	if err := s.endRecurrence(ctx, r.ID, pix.RecurrenceCancelled, pix.CancelledByMerchant, withdrawn); err != nil {
		return View{}, err
	}
	if r, err = s.loadRecurrence(ctx, c, id); err != nil {
		return View{}, err
	}
	return s.recurrenceView(ctx, r)
}

// withdrawCycles cancels at the PSP r's cycle charges still PENDING and
// returns those it withdrew; the PSP refuses those whose debit is under
// way, which are left to end as their debit does.
func (s *Service) withdrawCycles(ctx context.Context, rec provider.Recurrer, r pix.Recurrence) ([]string, error) {
	cycles, err := s.db.CycleCharges(ctx, r.ID)
	if err != nil {
		return nil, fmt.Errorf("cycles of %s: %w", r.ID, err)
	}
	var out []string
	for _, cy := range cycles {
		if cy.Status != pix.StatusPending {
			continue
		}
		t, err := s.db.TransactionByID(ctx, cy.PaymentID)
		if err != nil {
			return nil, fmt.Errorf("cycle charge %s: %w", cy.PaymentID, err)
		}
		switch err := rec.CancelCycleCharge(ctx, t.TxID); {
		case err == nil || errors.Is(err, provider.ErrNotFound):
			out = append(out, t.ID)
		case errors.Is(err, provider.ErrRejected):
			s.log.InfoContext(ctx, "a cycle charge's debit is under way; it ends as its debit does", "charge", t.ID)
		default:
			return nil, err
		}
	}
	return out, nil
}

// endRecurrence moves recurrence id to a final status (CANCELLED with by,
// REJECTED or EXPIRED) with its event, and cancels the charges withdrawn
// (PENDING ones; each with pix.cashin.cancelled), in one transaction. A
// recurrence that can no longer move there is left as it is.
func (s *Service) endRecurrence(ctx context.Context, id string, to pix.RecurrenceStatus, by pix.CancelledBy, withdrawn []string) error {
	now := s.clocks.At(ctx)
	err := s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		// Charges are locked before their recurrence, as a payment does.
		for _, pid := range withdrawn {
			t, err := tx.TransactionByIDForUpdate(ctx, pid)
			if err != nil {
				return err
			}
			if t.Status == pix.StatusPending {
				if err := s.cashin.Cancel(ctx, tx, o, &t, now); err != nil {
					return err
				}
				if err := tx.UpdateCycleRetry(ctx, t.ID, pix.Date{}, now); err != nil {
					return err
				}
			}
		}
		r, err := tx.RecurrenceForUpdate(ctx, id)
		if err != nil {
			return err
		}
		if !r.Status.CanBecome(to) {
			return nil
		}
		return s.moveRecurrence(ctx, tx, o, r, to, by, now)
	})
	if err != nil {
		return fmt.Errorf("end recurrence %s: %w", id, err)
	}
	return nil
}
