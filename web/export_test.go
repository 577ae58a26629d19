package web

// CardRenders is how many event cards s rendered for live streams and catch-ups.
func CardRenders(s *Server) int64 { return s.cardRenders.Load() }

// LoginBuckets is how many rate-limit buckets the sign-in limiter holds, by address and by email.
func LoginBuckets(s *Server) (byAddr, byEmail int) {
	return s.logins.byAddr.Len(), s.logins.byEmailNet.Len() + s.logins.byEmail.Len()
}

// NiceStep is niceStep, for tests.
func NiceStep(max int) int { return niceStep(max) }
