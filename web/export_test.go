package web

// CardRenders is how many event cards s rendered for live streams and catch-ups.
func CardRenders(s *Server) int64 { return s.cardRenders.Load() }
