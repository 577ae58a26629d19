//go:build unix

package connlimit

import "syscall"

// FileLimit raises the soft limit of open files to the hard one (Go does so itself at
// start since 1.19; this makes sure of it) and returns it; 0 when it cannot be read.
func FileLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	if r.Cur < r.Max {
		want := r
		want.Cur = want.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) == nil {
			r = want
		}
	}
	if r.Cur > 1<<30 { // RLIM_INFINITY: no limit worth the name
		return 1 << 30
	}
	return int(r.Cur)
}
