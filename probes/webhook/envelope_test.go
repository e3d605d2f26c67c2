package webhook

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
)

func TestEveryReceiverEnvelopeVector(t *testing.T) {
	for _, file := range []string{"spec/vectors/webhook-receiver-envelope.json", "spec/vectors/compliance/webhook-receiver-envelope.json"} {
		b, err := os.ReadFile(shared.File(t, file))
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Positive []struct {
				ID        string          `json:"id"`
				SameEvent string          `json:"same_event_as"`
				Payload   json.RawMessage `json:"payload"`
			} `json:"positive"`
			Negative []struct {
				ID            string          `json:"id"`
				ExpectedError string          `json:"expected_error"`
				Payload       json.RawMessage `json:"payload"`
			} `json:"negative"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if len(v.Positive) == 0 || len(v.Negative) == 0 {
			t.Fatal("no vectors")
		}
		keys := map[string]string{}
		for _, x := range v.Positive {
			if err := CheckEnvelope(x.Payload); err != nil {
				t.Errorf("%s: %s: %v", file, x.ID, err)
			}
			keys[x.ID] = IdempotencyKey(x.Payload)
			if x.SameEvent != "" && keys[x.SameEvent] != IdempotencyKey(x.Payload) {
				t.Errorf("%s: the retry does not keep the key of %s", x.ID, x.SameEvent)
			}
		}
		for _, x := range v.Negative {
			var ee *EnvelopeError
			if err := CheckEnvelope(x.Payload); !errors.As(err, &ee) || ee.Code != x.ExpectedError {
				t.Errorf("%s: %s: got %v, want %s", file, x.ID, err, x.ExpectedError)
			}
		}
		t.Logf("%s: %d positive, %d negative", file, len(v.Positive), len(v.Negative))
	}
}

func TestEveryPayloadExtractionVector(t *testing.T) {
	b, err := os.ReadFile(shared.File(t, "spec/vectors/webhook-payload-extraction.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Vectors []struct {
			ID             string          `json:"id"`
			Format         string          `json:"format"`
			Payload        json.RawMessage `json:"payload"`
			ExpectedFormat string          `json:"expected_format"`
			ExpectedData   json.RawMessage `json:"expected_data"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(b, &v); err != nil || len(v.Vectors) == 0 {
		t.Fatalf("no vectors: %v", err)
	}
	for _, x := range v.Vectors {
		// Detection on its own: the vectors that carry task_id (or an A2A
		// status object) must be told apart without the known format.
		if got := DetectFormat(x.Payload); got != "" && got != x.ExpectedFormat {
			t.Errorf("%s: detected %q, want %q", x.ID, got, x.ExpectedFormat)
		}
		for _, format := range []string{x.Format, ""} {
			got := Extract(x.Payload, format)
			if format == "" && DetectFormat(x.Payload) == "" {
				continue
			}
			if !sameJSON(got, x.ExpectedData) {
				t.Errorf("%s (format %q): extracted %s, want %s", x.ID, format, got, x.ExpectedData)
			}
		}
	}
	t.Logf("%d extraction vectors", len(v.Vectors))
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if len(a) == 0 {
		a = json.RawMessage("null")
	}
	if len(b) == 0 {
		b = json.RawMessage("null")
	}
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

func TestCheckEnvelopeRefusesWhatTheSchemaRefuses(t *testing.T) {
	ok := `{"idempotency_key":"whk_0123456789abcdef","operation_id":"op","task_id":"t","task_type":"get_products","status":"completed","timestamp":"2026-01-01T00:00:00Z","result":{}}`
	if err := CheckEnvelope([]byte(ok)); err != nil {
		t.Fatal(err)
	}
	for body, code := range map[string]string{
		`[]`:   EnvNotJSONObject,
		`null`: EnvNotJSONObject,
		`{"idempotency_key":"short","operation_id":"op","task_id":"t","task_type":"x","status":"completed","timestamp":"t","result":{}}`:             EnvInvalidKey,
		`{"idempotency_key":"whk_0123456789abcdef","operation_id":1,"task_id":"t","task_type":"x","status":"completed","timestamp":"t","result":{}}`: EnvWrongFieldType,
		// json.Unmarshal reads null into a string silently; the schema types each field string.
		`{"idempotency_key":"whk_0123456789abcdef","operation_id":"op","task_id":null,"task_type":"x","status":"completed","timestamp":"t","result":{}}`: EnvWrongFieldType,
		`{"idempotency_key":"whk_0123456789abcdef","operation_id":"op","task_id":"t","task_type":"x","status":"completed","timestamp":null,"result":{}}`: EnvWrongFieldType,
		`{"idempotency_key":"whk_0123456789abcdef","operation_id":"op","task_id":"t","task_type":"x","status":"completed","timestamp":"t"}`:              EnvMissingResult,
		`{"idempotency_key":"whk_0123456789abcdef","operation_id":"op","task_id":"t","task_type":"x","status":"failed","timestamp":"t","result":null}`:   EnvMissingResult,
	} {
		var ee *EnvelopeError
		if err := CheckEnvelope([]byte(body)); !errors.As(err, &ee) || ee.Code != code {
			t.Errorf("%s: got %v, want %s", body, err, code)
		}
	}
	if CheckOperationID([]byte(ok), "op") != nil || CheckOperationID([]byte(ok), "op2") == nil || CheckOperationID([]byte(`{}`), "op") == nil {
		t.Error("CheckOperationID")
	}
}

// TestEnvelopeReadsKeysExactCase: operation_id, idempotency_key and a
// JWKS's members match exactly, as a receiver's JSON.parse reads them;
// encoding/json's struct decoding matched them case-insensitively.
func TestEnvelopeReadsKeysExactCase(t *testing.T) {
	if err := CheckOperationID([]byte(`{"operation_id":"op-1","Operation_ID":"other"}`), "op-1"); err != nil {
		t.Errorf("CheckOperationID: %v", err)
	}
	if err := CheckOperationID([]byte(`{"OPERATION_ID":"op-1"}`), "op-1"); err == nil {
		t.Error("CheckOperationID reads OPERATION_ID as operation_id")
	}
	if got := IdempotencyKey([]byte(`{"idempotency_key":"k1","Idempotency_Key":"k2"}`)); got != "k1" {
		t.Errorf("IdempotencyKey = %q", got)
	}
	keys, err := ParseJWKS([]byte(`{"keys":[{"kid":"a","kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","KTY":"RSA"}]}`))
	if err != nil || len(keys) != 1 || keys[0].Kty != "OKP" {
		t.Errorf("ParseJWKS = %+v, %v", keys, err)
	}
}

func TestValidIdempotencyKeyIsThePattern(t *testing.T) {
	for key, want := range map[string]bool{
		strings.Repeat("a", 16): true, strings.Repeat("a", 15): false, strings.Repeat("a", 255): true, strings.Repeat("a", 256): false,
		"whk_0123456789ab:-.": true, "whk_0123456789ab/": false, "whk_0123456789abé": false, "": false,
	} {
		if got := ValidIdempotencyKey(key); got != want {
			t.Errorf("ValidIdempotencyKey(%q) = %v, want %v", key, got, want)
		}
	}
}
