package tidings_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNoBuiltFiles: nothing built is committed (two binaries of 9.5 and 22.4 MB once
// were): no tracked file is an executable program (ELF, Mach-O, PE), an executable file
// is a script with a #! line, and no file is over 2 MB.
func TestNoBuiltFiles(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-s", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v): nothing to check", err)
	}
	magic := map[string][]byte{"ELF": []byte("\x7fELF"), "Mach-O": {0xcf, 0xfa, 0xed, 0xfe}, "Mach-O (32-bit)": {0xce, 0xfa, 0xed, 0xfe},
		"PE": []byte("MZ"), "Mach-O (fat)": {0xca, 0xfe, 0xba, 0xbe}}
	for _, entry := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		meta, path, ok := strings.Cut(entry, "\t")
		if !ok {
			continue
		}
		fields := strings.Fields(meta)
		if len(fields) == 0 || fields[0] == "160000" { // a submodule
			continue
		}
		info, err := os.Stat(path)
		if err != nil {
			continue // deleted in the work tree
		}
		if info.Size() > 2<<20 {
			t.Errorf("%s is %d bytes: built or generated files are not committed", path, info.Size())
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 4096)
		n, _ := f.Read(head)
		f.Close()
		head = head[:n]
		binary := bytes.IndexByte(head, 0) >= 0 // a program has NUL bytes near its start; text never
		for kind, m := range magic {
			if binary && bytes.HasPrefix(head, m) {
				t.Errorf("%s is a compiled program (%s): nothing built is committed; add it to .gitignore", path, kind)
			}
		}
		if fields[0] == "100755" && !bytes.HasPrefix(head, []byte("#!")) {
			t.Errorf("%s is executable but not a script: nothing built is committed", path)
		}
	}
}
