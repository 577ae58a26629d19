//go:build !unix

package changemark

import "os"

func mapFile(*os.File, int) []byte { return nil }

func unmap([]byte) {}

func load([]byte) uint64 { return 0 }
