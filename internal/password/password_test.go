package password

import "testing"

func TestHashVerify(t *testing.T) {
	h, err := Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Verify(h, "correct horse"); !ok || err != nil {
		t.Fatalf("right password refused: %v", err)
	}
	if ok, _ := Verify(h, "correct horsE"); ok {
		t.Fatal("wrong password accepted")
	}
	h2, _ := Hash("correct horse")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	if _, err := Hash("short"); err == nil {
		t.Fatal("short password accepted")
	}
	if _, err := Verify("plain", "x"); err == nil {
		t.Fatal("garbage hash accepted")
	}
}
