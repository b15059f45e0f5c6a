package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// batchCandidate is a batch item that passed validation: the payout it
// would create.
type batchCandidate struct {
	index int
	t     pix.Transaction
	d     pix.PayoutDetails
	day   pix.Date
}

// acceptItems takes batch r's items in order, each as its single request
// would be taken, and returns what became of each. Items are reserved by
// runs of up to batchChunk in one transaction each: a run is cut before an
// item whose external_id an earlier item of the run holds, so that the
// later one replays (or is refused by) the payout the earlier created.
func (p *Payouts) acceptItems(ctx context.Context, c pix.Client, r *BatchRequest) []pix.BatchItem {
	out := make([]pix.BatchItem, len(r.Items))
	cands := make([]*batchCandidate, len(r.Items))
	exts := make([]string, 0, len(r.Items))
	for i, item := range r.Items {
		out[i] = pix.BatchItem{Index: i}
		if req := item.In.Req; req != nil && req.ExternalID != nil {
			out[i].ExternalID = *req.ExternalID
		}
		cand, err := p.prepareItem(ctx, c, r, item)
		if err != nil {
			p.reject(ctx, &out[i], err)
			continue
		}
		cand.index, cands[i] = i, cand
		exts = append(exts, cand.t.ExternalID)
	}
	known, err := p.s.db.TransactionsByExternalIDs(ctx, c.ID, exts)
	if err != nil {
		known = map[string]pix.Transaction{}
		p.s.Log.ErrorContext(ctx, "batch: read earlier payouts", "error", err.Error())
	}
	var run []*batchCandidate
	inRun := map[string]bool{}
	flush := func() {
		p.reserve(ctx, c, run, out, known)
		run, inRun = run[:0], map[string]bool{}
	}
	for i, cand := range cands {
		if cand == nil {
			continue
		}
		ext := cand.t.ExternalID
		if inRun[ext] {
			flush()
		}
		if prev, ok := known[ext]; ok {
			resp, _, err := replayPayout(prev, ext, cand.t.RequestHash)
			p.settle(ctx, &out[i], resp, err)
			continue
		}
		run, inRun[ext] = append(run, cand), true
		if len(run) == batchChunk {
			flush()
		}
	}
	flush()
	return out
}

// prepareItem validates one item as its single request would be, and
// builds its payout; an item without its callbackUrl takes the batch's.
func (p *Payouts) prepareItem(ctx context.Context, c pix.Client, r *BatchRequest, item BatchItemInput) (*batchCandidate, error) {
	if item.Err != nil {
		return nil, item.Err
	}
	s, req := p.s, item.In.Req
	if req.CallbackURL == "" {
		req.CallbackURL = r.CallbackURL
	}
	amount, err := s.validatePayout(req, "")
	if err != nil {
		return nil, err
	}
	if req.ExternalID == nil {
		return nil, fieldInvalid("external_id", "is required on every item of a batch")
	}
	day, err := s.scheduledDay(ctx, req.ScheduledDate)
	if err != nil {
		return nil, err
	}
	if item.In.Hash == "" {
		return nil, pix.InvalidBody()
	}
	t, d, err := s.newPayout(ctx, c, req, amount, *req.ExternalID, "", item.In.Hash, day)
	if err != nil {
		return nil, err
	}
	return &batchCandidate{t: t, d: d, day: day}, nil
}

// reserve creates the payouts of run in order in one transaction, those
// the available balance holds (read first: an item that does not fit is
// refused as its single request would be, and takes nothing). If the
// transaction fails (the balance moved meanwhile, a concurrent duplicate)
// the run is created again payout by payout, each with its own answer.
func (p *Payouts) reserve(ctx context.Context, c pix.Client, run []*batchCandidate, out []pix.BatchItem, known map[string]pix.Transaction) {
	if len(run) == 0 {
		return
	}
	s := p.s
	avail, err := s.balanceOf(ctx, c)
	if err != nil {
		for _, cand := range run {
			p.reject(ctx, &out[cand.index], err)
		}
		return
	}
	var ps []store.NewPayout
	var sched []store.ScheduledPayout
	fits := make([]*batchCandidate, 0, len(run))
	for _, cand := range run {
		if cand.day.IsZero() {
			need := cand.t.Amount + cand.t.Tax
			if need > avail {
				p.reject(ctx, &out[cand.index], insufficientFrom(avail, need))
				continue
			}
			avail -= need
			s.transfers.Accept(ctx, &cand.t, cand.d)
			ps = append(ps, s.reservation(cand.t))
		} else {
			sched = append(sched, store.ScheduledPayout{Transaction: cand.t, Date: cand.day.String(), DueAt: cand.day.Start(s.loc)})
		}
		fits = append(fits, cand)
	}
	err = s.db.CreatePayoutRun(ctx, ps, sched)
	if err != nil && (errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrInsufficientFunds)) {
		for _, cand := range fits {
			p.createOne(ctx, c, cand, &out[cand.index], known)
		}
		return
	}
	for _, cand := range fits {
		if err != nil {
			p.reject(ctx, &out[cand.index], err)
			continue
		}
		known[cand.t.ExternalID] = cand.t
		p.settle(ctx, &out[cand.index], payoutResponse(cand.t), nil)
	}
}

// createOne creates one item's payout on its own, as its single request
// would: a duplicate replays the earlier payout or is refused.
func (p *Payouts) createOne(ctx context.Context, c pix.Client, cand *batchCandidate, item *pix.BatchItem, known map[string]pix.Transaction) {
	s, t := p.s, cand.t
	var err error
	if cand.day.IsZero() {
		err = s.db.CreatePayout(ctx, s.reservation(t))
	} else {
		err = s.db.CreateScheduledPayout(ctx, store.ScheduledPayout{Transaction: t, Date: cand.day.String(), DueAt: cand.day.Start(s.loc)})
	}
	switch {
	case errors.Is(err, store.ErrConflict):
		resp, _, err := replayFound(findPrevious(ctx, s.db, c.ID, t.ExternalID, ""))(t.ExternalID, t.RequestHash)
		p.settle(ctx, item, resp, err)
	case errors.Is(err, store.ErrInsufficientFunds):
		p.reject(ctx, item, s.insufficientBalance(ctx, c, t.Amount+t.Tax))
	case err != nil:
		p.reject(ctx, item, err)
	default:
		known[t.ExternalID] = t
		p.settle(ctx, item, payoutResponse(t), nil)
	}
}

// reservation is the creation of payout t with the posting that reserves
// its amount and tax.
func (s *Service) reservation(t pix.Transaction) store.NewPayout {
	return store.NewPayout{Transaction: t, Posting: store.PostingWrite{ID: s.w.OrderedID(), ClientID: t.ClientID, TransactionID: t.ID,
		Posting: ledger.PayoutReserved(t.Amount, t.Tax)}}
}

// settle records item as its single request was answered: resp, or err.
func (p *Payouts) settle(ctx context.Context, item *pix.BatchItem, resp PayoutResponse, err error) {
	if err != nil {
		p.reject(ctx, item, err)
		return
	}
	item.TransactionID, item.Accepted = resp.TransactionID, resp.Status
}

// reject records item as refused with err, the error of its single
// request; an error that is no domain error is logged and refuses it as
// the single request's 500 would.
func (p *Payouts) reject(ctx context.Context, item *pix.BatchItem, err error) {
	item.TransactionID, item.Accepted = "", pix.StatusRejected
	pe := pix.AsError(err)
	if pe == nil {
		p.s.Log.ErrorContext(ctx, "batch item failed", "index", item.Index, "error", err.Error())
		pe = &pix.Error{Code: pix.EInternal}
	}
	item.ErrorCode, item.ErrorMessage = pe.Code, pe.Message
}

// insufficientFrom is the 422 Insufficient balance of a payout needing
// need while avail is available.
func insufficientFrom(avail, need pix.Amount) error {
	return &pix.Error{Code: pix.EInsufficientBalance, Message: "Insufficient balance",
		Details: []pix.FieldIssue{{Field: "amount", Issue: fmt.Sprintf("available R$ %s is less than amount + tax R$ %s", avail, need)}}}
}
