package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// The client assertion is a JWS the authorization server can verify with
// the client's public key, naming the client (iss, sub) and the server
// (aud).
func TestClientAssertionVerifies(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	tests := []struct {
		name string
		pem  []byte
		alg  string
	}{
		{"EC P-256, PKCS#8", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}), "ES256"},
		{"RSA, PKCS#1", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rs)}), "RS256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, alg, err := parseClientKey(tt.pem, "")
			if err != nil || alg != tt.alg {
				t.Fatalf("parse: %v, %q", err, alg)
			}
			c := &jwtClient{id: "robot", key: key, alg: alg}
			a, err := c.assertion("https://auth.example.com", time.Unix(1000, 0))
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(a, ".")
			if len(parts) != 3 {
				t.Fatalf("not a JWS: %q", a)
			}
			var header, claims map[string]any
			h, _ := base64.RawURLEncoding.DecodeString(parts[0])
			b, _ := base64.RawURLEncoding.DecodeString(parts[1])
			json.Unmarshal(h, &header)
			json.Unmarshal(b, &claims)
			if header["alg"] != tt.alg || claims["iss"] != "robot" || claims["sub"] != "robot" || claims["aud"] != "https://auth.example.com" || claims["exp"].(float64) <= claims["iat"].(float64) {
				t.Errorf("header %v, claims %v", header, claims)
			}
			sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
			sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
			ok := false
			switch tt.alg {
			case "ES256":
				ok = ecdsa.Verify(&ec.PublicKey, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
			case "RS256":
				ok = rsa.VerifyPKCS1v15(&rs.PublicKey, crypto.SHA256, sum[:], sig) == nil
			}
			if !ok {
				t.Error("the signature does not verify")
			}
		})
	}
	if _, _, err := parseClientKey([]byte("not a key"), ""); err == nil {
		t.Error("a non-PEM key was accepted")
	}
}
