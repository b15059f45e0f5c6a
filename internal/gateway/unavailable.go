package gateway

// Unavailable reports whether err says that the database cannot be reached
// or cannot store anything now (store.DB.Unavailable): the API answers
// 503 to it and background work backs off, where any other failure is a
// 500 or a logged error.
func (s *Service) Unavailable(err error) bool { return s.db.Unavailable(err) }
