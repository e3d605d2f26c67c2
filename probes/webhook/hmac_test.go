package webhook

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/shared"
)

type hmacVectors struct {
	Secret  string `json:"secret"`
	Vectors []struct {
		ID             string          `json:"id"`
		Timestamp      json.RawMessage `json:"timestamp"`
		RawBody        string          `json:"raw_body"`
		Expected       string          `json:"expected_signature"`
		VerifierAction string          `json:"expected_verifier_action"`
	} `json:"vectors"`
	Rejections []struct {
		ID          string          `json:"id"`
		Timestamp   json.RawMessage `json:"timestamp"`
		RawBody     string          `json:"raw_body"`
		Signature   *string         `json:"signature"`
		CurrentTime int64           `json:"current_time"`
	} `json:"rejection_vectors"`
	Secrets []struct {
		Secret string `json:"secret"`
	} `json:"secret_rejection_vectors"`
}

func loadHMAC(t *testing.T) hmacVectors {
	t.Helper()
	b, err := os.ReadFile(shared.File(t, "spec/vectors/webhook-hmac-sha256.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v hmacVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Vectors) == 0 || len(v.Rejections) == 0 {
		t.Fatal("no vectors")
	}
	return v
}

// tsText renders a vector's timestamp (a number or, in a rejection vector,
// a string) as the header's text.
func tsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func TestEveryHMACVectorSignsAndVerifies(t *testing.T) {
	v := loadHMAC(t)
	for _, x := range v.Vectors {
		t.Run(x.ID, func(t *testing.T) {
			var ts int64
			if err := json.Unmarshal(x.Timestamp, &ts); err != nil {
				t.Fatal(err)
			}
			if got := Sign([]byte(v.Secret), []byte(x.RawBody), ts); got != x.Expected {
				t.Errorf("Sign = %s, want %s", got, x.Expected)
			}
			err := VerifyHMAC([]byte(v.Secret), []byte(x.RawBody), x.Expected, tsText(x.Timestamp), time.Unix(ts, 0))
			switch x.VerifierAction {
			case "reject-malformed":
				if !errors.Is(err, ErrMalformedBody) {
					t.Errorf("verify = %v, want a malformed-body rejection (the signature itself is valid)", err)
				}
			default:
				if err != nil {
					t.Errorf("verify = %v", err)
				}
			}
		})
	}
}

func TestEveryHMACRejectionVectorIsRejected(t *testing.T) {
	v := loadHMAC(t)
	for _, x := range v.Rejections {
		t.Run(x.ID, func(t *testing.T) {
			now := time.Unix(1700000000, 0)
			if x.CurrentTime != 0 {
				now = time.Unix(x.CurrentTime, 0)
			}
			sig := ""
			if x.Signature != nil {
				sig = *x.Signature
			}
			err := VerifyHMAC([]byte(v.Secret), []byte(x.RawBody), sig, tsText(x.Timestamp), now)
			if !errors.Is(err, ErrSignature) && !errors.Is(err, ErrTimestamp) {
				t.Errorf("verify = %v, want a signature or timestamp rejection", err)
			}
		})
	}
}

func TestWeakSecretsAreRefused(t *testing.T) {
	v := loadHMAC(t)
	for _, x := range v.Secrets {
		if CheckSecret(x.Secret) == nil {
			t.Errorf("secret %q accepted", x.Secret)
		}
	}
	if err := CheckSecret(v.Secret); err != nil {
		t.Errorf("the vectors' own secret refused: %v", err)
	}
}

func TestDuplicateKeysAtAnyDepth(t *testing.T) {
	for body, want := range map[string]bool{
		`{"a":1,"b":{"a":2}}`:             false,
		`{"a":1,"a":2}`:                   true,
		`{"x":[{"k":1},{"k":2,"k":3}]}`:   true,
		`{"x":{"y":{"z":1}},"y":{"z":2}}`: false,
		`[{"a":"a"},{"a":"a"}]`:           false,
		`{"a":{"b":1},"c":[1,"a"],"a":0}`: true,
		`not json`:                        false,
	} {
		if got := DuplicateKeys([]byte(body)); got != want {
			t.Errorf("DuplicateKeys(%s) = %v, want %v", body, got, want)
		}
	}
}
