//go:build !unix

package connlimit

// FileLimit is unknown here: DefaultMax then falls back to Ceiling.
func FileLimit() int { return 0 }
