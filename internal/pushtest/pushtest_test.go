package pushtest

import (
	"crypto/ecdh"
	"encoding/base64"
	"testing"
)

// TestDecryptRFC8291: the decryptor opens RFC 8291 Appendix A's message.
func TestDecryptRFC8291(t *testing.T) {
	b := func(s string) []byte {
		out, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ua, err := ecdh.P256().NewPrivateKey(b("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"))
	if err != nil {
		t.Fatal(err)
	}
	if base64.RawURLEncoding.EncodeToString(ua.PublicKey().Bytes()) != "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4" {
		t.Fatal("the vector's public key does not match its private key")
	}
	body := b("DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")
	plain, err := Decrypt(body, ua, b("BTBZMqHH6r4Tts7J_aSIgg"))
	if err != nil || string(plain) != "When I grow up, I want to be a watermelon" {
		t.Fatalf("%q %v", plain, err)
	}
	body[len(body)-1] ^= 1
	if _, err := Decrypt(body, ua, b("BTBZMqHH6r4Tts7J_aSIgg")); err == nil {
		t.Fatal("a tampered message decrypted")
	}
}
