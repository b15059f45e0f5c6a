package backoffice

import "github.com/pixgate/pixgate/internal/provider"

// PSPHealth is what the provider has seen of its PSP (the last successful
// call, how the last one failed, the webhook registration), for the
// operators' overview; ok is false when there is no provider or it calls
// no PSP (the simulated network of the sandbox).
func (s *Service) PSPHealth() (h provider.Health, ok bool) {
	r, ok := s.provider.(provider.HealthReporter)
	if !ok {
		return provider.Health{}, false
	}
	return r.Health(), true
}
