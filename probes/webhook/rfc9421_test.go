package webhook

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/shared"
)

type signingVector struct {
	Name         string `json:"name"`
	ReferenceNow int64  `json:"reference_now"`
	Request      struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	} `json:"request"`
	JWKSRef         []string       `json:"jwks_ref"`
	JWKSOverride    map[string]JWK `json:"jwks_override"`
	ExpectedBase    string         `json:"expected_signature_base"`
	ExpectedOutcome struct {
		Success   bool   `json:"success"`
		ErrorCode string `json:"error_code"`
	} `json:"expected_outcome"`
	HarnessState *struct {
		ReplayCache []struct {
			Keyid string `json:"keyid"`
			Nonce string `json:"nonce"`
		} `json:"replay_cache_entries"`
		RevokedKids  []string `json:"revoked_kids"`
		CapFilledFor string   `json:"per_keyid_cap_filled_for"`
		StaleSeconds int      `json:"revocation_list_stale_seconds"`
	} `json:"test_harness_state"`
}

func signingVectors(t *testing.T, dir string) map[string]signingVector {
	t.Helper()
	root := shared.File(t, "spec/vectors/compliance/webhook-signing")
	files, err := filepath.Glob(filepath.Join(root, dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s vectors in %s", dir, root)
	}
	out := map[string]signingVector{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v signingVector
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = v
	}
	return out
}

func testKeys(t *testing.T) map[string]JWK {
	t.Helper()
	b, err := os.ReadFile(shared.File(t, "spec/vectors/compliance/webhook-signing/keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ParseJWKS(b)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]JWK{}
	for _, k := range keys {
		out[k.Kid] = k
	}
	return out
}

// verifyVector sets up the verifier as the vector says (its JWKS subset,
// its clock, its harness state) and verifies its request.
func verifyVector(t *testing.T, v signingVector, keys map[string]JWK) error {
	t.Helper()
	o := VerifyOptions{Now: time.Unix(v.ReferenceNow, 0), Nonces: &NonceCache{}}
	for _, kid := range v.JWKSRef {
		k, ok := keys[kid]
		if o, over := v.JWKSOverride[kid]; over {
			k, ok = o, true
		}
		if ok {
			o.Keys = append(o.Keys, k)
		}
	}
	if s := v.HarnessState; s != nil {
		for _, e := range s.ReplayCache {
			o.Nonces.Preload(e.Keyid, e.Nonce)
		}
		o.Revoked = map[string]bool{}
		for _, k := range s.RevokedKids {
			o.Revoked[k] = true
		}
		if s.CapFilledFor != "" {
			o.CapFull = func(kid string) bool { return kid == s.CapFilledFor }
		}
		o.RevocationStale = s.StaleSeconds > 0
	}
	h := http.Header{}
	for k, val := range v.Request.Headers {
		h.Set(k, val)
	}
	return VerifyRFC9421(Request{Method: v.Request.Method, URL: v.Request.URL, Header: h, Body: []byte(v.Request.Body)}, o)
}

func TestEveryWebhookSigningPositiveVectorVerifies(t *testing.T) {
	keys := testKeys(t)
	vs := signingVectors(t, "positive")
	for name, v := range vs {
		t.Run(name, func(t *testing.T) {
			if err := verifyVector(t, v, keys); err != nil {
				t.Fatalf("%s: %v", v.Name, err)
			}
			h := http.Header{}
			for k, val := range v.Request.Headers {
				h.Set(k, val)
			}
			in, err := parseSignatureInput(h.Get("Signature-Input"))
			if err != nil {
				t.Fatal(err)
			}
			base, err := signatureBase(Request{Method: v.Request.Method, URL: v.Request.URL, Header: h}, in[Label])
			if err != nil || base != v.ExpectedBase {
				t.Errorf("signature base:\n%s\nwant\n%s (%v)", base, v.ExpectedBase, err)
			}
		})
	}
	t.Logf("%d positive vectors", len(vs))
}

func TestEveryWebhookSigningNegativeVectorIsRejectedWithItsCode(t *testing.T) {
	keys := testKeys(t)
	vs := signingVectors(t, "negative")
	for name, v := range vs {
		t.Run(name, func(t *testing.T) {
			err := verifyVector(t, v, keys)
			var se *SignatureError
			if !errors.As(err, &se) || se.Code != v.ExpectedOutcome.ErrorCode {
				t.Fatalf("%s: got %v, want %s", v.Name, err, v.ExpectedOutcome.ErrorCode)
			}
		})
	}
	t.Logf("%d negative vectors", len(vs))
}

func TestTheReplayVectorIsRejectedOnItsSecondDelivery(t *testing.T) {
	// 016's black-box behaviour: deliver twice; the first is accepted.
	v := signingVectors(t, "negative")["016-replayed-nonce"]
	v.HarnessState = nil
	keys := testKeys(t)
	o := VerifyOptions{Now: time.Unix(v.ReferenceNow, 0), Nonces: &NonceCache{}, Keys: []JWK{keys["test-ed25519-webhook-2026"]}}
	h := http.Header{}
	for k, val := range v.Request.Headers {
		h.Set(k, val)
	}
	r := Request{Method: v.Request.Method, URL: v.Request.URL, Header: h, Body: []byte(v.Request.Body)}
	if err := VerifyRFC9421(r, o); err != nil {
		t.Fatalf("first delivery: %v", err)
	}
	var se *SignatureError
	if err := VerifyRFC9421(r, o); !errors.As(err, &se) || se.Code != CodeReplayed {
		t.Fatalf("second delivery: %v", err)
	}
}

func TestMalformedSignatureHeadersNeverPanic(t *testing.T) {
	for _, si := range []string{"", "sig1=", "sig1=(", `sig1=("@method"`, `sig1=()x`, `sig1=();created=`, `sig1=();a="unterminated`, `sig1=();created=99999999999999999999`, `=()`, `sig1=("a" "b");x=1, sig1=`} {
		h := http.Header{"Signature-Input": {si}, "Signature": {"sig1=:AAAA:"}}
		if err := VerifyRFC9421(Request{Method: "POST", URL: "https://x.example/", Header: h}, VerifyOptions{Now: time.Now()}); err == nil {
			t.Errorf("%q verified", si)
		}
	}
}
