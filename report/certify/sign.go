package certify

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/adcp-conform/adcp-conform/report"
)

// The file names of a signed report folder and of a key pair.
const (
	ResultsFile   = "results.json"
	SignatureFile = "results.json.sig"
	PrivateSuffix = ".key"
	PublicSuffix  = ".pub"
)

// GenerateKey returns a new Ed25519 key pair.
func GenerateKey() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	return ed25519.GenerateKey(rand.Reader)
}

// MarshalPrivateKey returns the PEM form of a private key (PKCS #8).
func MarshalPrivateKey(k ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// MarshalPublicKey returns the PEM form of a public key (PKIX).
func MarshalPublicKey(k ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// WriteKeyPair writes prefix.key (mode 0600) and prefix.pub (mode 0644) for
// a new key pair. It never overwrites an existing file.
func WriteKeyPair(prefix string) (ed25519.PublicKey, error) {
	pub, priv, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	privPEM, err := MarshalPrivateKey(priv)
	if err != nil {
		return nil, err
	}
	pubPEM, err := MarshalPublicKey(pub)
	if err != nil {
		return nil, err
	}
	if err := writeNew(prefix+PrivateSuffix, privPEM, 0o600); err != nil {
		return nil, err
	}
	if err := writeNew(prefix+PublicSuffix, pubPEM, 0o644); err != nil {
		os.Remove(prefix + PrivateSuffix)
		return nil, err
	}
	return pub, nil
}

func writeNew(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readPEM(path, typ string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != typ {
		return nil, fmt.Errorf("%s: not a PEM %q block", path, typ)
	}
	return block.Bytes, nil
}

// ReadPrivateKey reads a PEM PKCS #8 Ed25519 private key.
func ReadPrivateKey(path string) (ed25519.PrivateKey, error) {
	der, err := readPEM(path, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an Ed25519 key", path)
	}
	return ek, nil
}

// ReadPublicKey reads a PEM PKIX Ed25519 public key.
func ReadPublicKey(path string) (ed25519.PublicKey, error) {
	der, err := readPEM(path, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an Ed25519 key", path)
	}
	return ek, nil
}

// Sign returns the content of results.json.sig for a results.json
// document: the base64 Ed25519 signature of its RFC 8785 form, and a
// newline.
func Sign(priv ed25519.PrivateKey, results []byte) ([]byte, error) {
	c, err := Canonical(results)
	if err != nil {
		return nil, err
	}
	sig := ed25519.Sign(priv, c)
	return []byte(base64.StdEncoding.EncodeToString(sig) + "\n"), nil
}

// VerifySignature checks a results.json.sig content against a results.json
// document.
func VerifySignature(pub ed25519.PublicKey, results, sigFile []byte) error {
	sig, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(sigFile)))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: %s is not a base64 Ed25519 signature", ErrMismatch, SignatureFile)
	}
	c, err := Canonical(results)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrMismatch, ResultsFile, err)
	}
	if !ed25519.Verify(pub, c, sig) {
		return fmt.Errorf("%w: the signature does not match %s and the public key", ErrMismatch, ResultsFile)
	}
	return nil
}

// VerifyDir checks a report folder: the signature of results.json, then
// every evidence hash it embeds, and that what it claims holds together
// (Claim.Check: no publishable certification of the bundled reference
// seller). The error joins every problem found; each
// wraps ErrMismatch when the folder does not match (a missing file too).
func VerifyDir(dir string, pub ed25519.PublicKey) error {
	results, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMismatch, err)
	}
	sig, err := os.ReadFile(filepath.Join(dir, SignatureFile))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMismatch, err)
	}
	if err := VerifySignature(pub, results, sig); err != nil {
		return err
	}
	var run struct {
		Integrity *report.Integrity `json:"integrity"`
	}
	if err := json.Unmarshal(results, &run); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrMismatch, ResultsFile, err)
	}
	claim, err := ReadClaim(results)
	if err != nil {
		return err
	}
	errs := Check(dir, run.Integrity)
	if err := claim.Check(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
