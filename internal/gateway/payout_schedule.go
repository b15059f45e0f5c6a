package gateway

import (
	"context"

	"github.com/pixgate/pixgate/internal/pix"
)

// maxScheduleDays is how far ahead a payout may be scheduled.
const maxScheduleDays = 365

// scheduledDay reads a payout's scheduled_date: zero when none was sent;
// else a São Paulo date from tomorrow to maxScheduleDays ahead on the
// client's clock, or EInvalid naming the field.
func (s *Service) scheduledDay(ctx context.Context, raw string) (pix.Date, error) {
	if raw == "" {
		return pix.Date{}, nil
	}
	day, err := pix.ParseDate(raw)
	if err != nil {
		return pix.Date{}, fieldInvalid("scheduled_date", "must be a date YYYY-MM-DD")
	}
	today := s.clocks.Today(ctx)
	if !day.After(today) {
		return pix.Date{}, fieldInvalid("scheduled_date", "must be after today ("+today.String()+", São Paulo): a payout for today is sent without a date")
	}
	if last := today.AddDays(maxScheduleDays); day.After(last) {
		return pix.Date{}, fieldInvalid("scheduled_date", "must be at most 365 days ahead ("+last.String()+")")
	}
	return day, nil
}

// fieldInvalid is the 400 Invalid request parameters naming field.
func fieldInvalid(field, issue string) error {
	return &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters", Details: []pix.FieldIssue{{Field: field, Issue: issue}}}
}
