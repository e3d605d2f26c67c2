package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/report/certify"
)

// signedRun writes a key pair and a signed run of the reference seller.
func signedRun(t *testing.T) (dir, pub string) {
	t.Helper()
	keys := filepath.Join(t.TempDir(), "ci")
	if code, out, errOut := run(t, nil, "", "keygen", "--out", keys); code != ExitOK {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	dir = t.TempDir()
	if code, out, errOut := run(t, nil, "", "run", "--out", dir, "--sign-key", keys+".key"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	return dir, keys + ".pub"
}

// flipByte changes one byte of a file: the first occurrence of old.
func flipByte(t *testing.T, path, old, repl string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(old) != len(repl) || !strings.Contains(string(b), old) {
		t.Fatalf("%s: cannot replace %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, repl, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue // the reference seller's A2A 0.3 report, a run of its own
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

func TestKeygenWritesAPrivateKeyOnlyItsOwnerReads(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "registry")
	if code, _, errOut := run(t, nil, "", "keygen", "--out", prefix); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	st, err := os.Stat(prefix + ".key")
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("private key: %v, mode %v", err, st.Mode())
	}
	if _, err := certify.ReadPrivateKey(prefix + ".key"); err != nil {
		t.Error(err)
	}
	if _, err := certify.ReadPublicKey(prefix + ".pub"); err != nil {
		t.Error(err)
	}
	if code, _, _ := run(t, nil, "", "keygen", "--out", prefix); code != ExitUsage {
		t.Errorf("keygen over existing keys: exit %d, want %d", code, ExitUsage)
	}
	if code, _, _ := run(t, nil, "", "keygen"); code != ExitUsage {
		t.Errorf("keygen without --out: exit %d, want %d", code, ExitUsage)
	}
}

func TestVerifyDetectsOneChangedByteInTheReportOrItsEvidence(t *testing.T) {
	dir, pub := signedRun(t)
	if _, err := os.Stat(filepath.Join(dir, FileSignature)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, nil, "", "verify", "--pubkey", pub, dir)
	if code != ExitOK || !strings.HasPrefix(out, "OK ") {
		t.Fatalf("untouched folder: exit %d\n%s%s", code, out, errOut)
	}

	results := copyDir(t, dir)
	flipByte(t, filepath.Join(results, FileResults), `"verdict": "conformant"`, `"verdict": "conformanT"`)
	code, out, _ = run(t, nil, "", "verify", "--pubkey", pub, results)
	if code != ExitNonConformant || !strings.Contains(out, "signature does not match") {
		t.Errorf("a changed results.json: exit %d\n%s", code, out)
	}

	ev := copyDir(t, dir)
	flipByte(t, filepath.Join(ev, FileEvidence), `"http_status": 200`, `"http_status": 201`)
	code, out, _ = run(t, nil, "", "verify", "--pubkey", pub, ev)
	if code != ExitNonConformant || !strings.Contains(out, "FAIL mismatch: evidence.json: sha256") ||
		!strings.Contains(out, "does not match its hash") || strings.Contains(out, "call 0 ()") {
		t.Errorf("a changed evidence.json: exit %d\n%s", code, out)
	}

	unsigned := copyDir(t, dir)
	if err := os.Remove(filepath.Join(unsigned, FileSignature)); err != nil {
		t.Fatal(err)
	}
	if code, out, _ = run(t, nil, "", "verify", "--pubkey", pub, unsigned); code != ExitNonConformant {
		t.Errorf("no signature: exit %d\n%s", code, out)
	}

	other := filepath.Join(t.TempDir(), "other")
	if code, _, _ := run(t, nil, "", "keygen", "--out", other); code != ExitOK {
		t.Fatal("keygen")
	}
	if code, out, _ = run(t, nil, "", "verify", "--pubkey", other+".pub", dir); code != ExitNonConformant {
		t.Errorf("another key: exit %d\n%s", code, out)
	}
}

func TestVerifyUsageErrors(t *testing.T) {
	dir := t.TempDir()
	notAKey := filepath.Join(dir, "x.pub")
	if err := os.WriteFile(notAKey, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"no folder":     {"verify", "--pubkey", notAKey},
		"no key":        {"verify", dir},
		"not a key":     {"verify", "--pubkey", notAKey, dir},
		"missing key":   {"verify", "--pubkey", filepath.Join(dir, "none.pub"), dir},
		"two folders":   {"verify", "--pubkey", notAKey, dir, dir},
		"bad sign key":  {"run", "--out", dir, "--sign-key", notAKey},
		"judge nothing": {"judge"},
		"judge no run":  {"judge", dir},
		"diff one file": {"diff", filepath.Join(dir, "a.json")},
		"diff missing":  {"diff", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")},
	} {
		if code, _, errOut := run(t, nil, "", args...); code != ExitUsage {
			t.Errorf("%s: exit %d, want %d (%s)", name, code, ExitUsage, errOut)
		}
	}
}
