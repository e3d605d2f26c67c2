package extract

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestValidateError(t *testing.T) {
	// pad returns an error object whose JSON.stringify form is n units
	// (ASCII: as many bytes).
	pad := func(n int) string {
		base := `{"code":"X","p":""}`
		return `{"code":"X","p":"` + strings.Repeat("a", n-len(base)) + `"}`
	}
	cases := []struct {
		name, in string
		ptr      string // "" with reason "" means valid
		reason   string
	}{
		{"minimal", `{"code":"X"}`, "", ""},
		{"array", `[{"code":"X"}]`, "", "is an array, not an object"},
		{"null", `null`, "", "is null, not an object"},
		{"string", `"RATE_LIMITED"`, "", "is a string, not an object"},
		{"code absent", `{"message":"x"}`, "/code", "is absent"},
		{"code number", `{"code":429}`, "/code", "is a number, not a string"},
		{"code null", `{"code":null}`, "/code", "is null, not a string"},
		{"code empty", `{"code":""}`, "/code", "is empty"},
		{"code repeated: last wins", `{"code":"X","code":""}`, "/code", "is empty"},
		{"code of 64 units", `{"code":"` + strings.Repeat("A", 64) + `"}`, "", ""},
		{"code of 65 units", `{"code":"` + strings.Repeat("A", 65) + `"}`, "/code", "is 65 UTF-16 code units, over 64"},
		{"code of 32 astral characters is 64 units", `{"code":"` + strings.Repeat("😀", 32) + `"}`, "", ""},
		{"code of 33 astral characters", `{"code":"` + strings.Repeat("😀", 33) + `"}`, "/code", "is 66 UTF-16 code units, over 64"},
		{"code of escapes counts decoded units", `{"code":"` + strings.Repeat(`\u0041`, 64) + `"}`, "", ""},
		{"whitespace is not counted", "{ \"code\" :\n \"X\" ," + strings.Repeat(" ", 5000) + "\"p\":1}", "", ""},
		{"4096 units", pad(4096), "", ""},
		{"4097 units", pad(4097), "", "serializes to 4097 UTF-16 code units, over 4096"},
		{"repeated keys count once", `{"code":"X","p":"` + strings.Repeat("a", 4000) + `","p":1}`, "", ""},
		// The unit is JavaScript's .length, as the reference validate() counts
		// (and as TextLimit does): 4096 units of é are 8173 bytes, and valid.
		{"non-ASCII counts UTF-16 units, not bytes", `{"code":"X","p":"` + strings.Repeat("é", 2039) + `"}`, "", ""},
		{"4096 units of non-ASCII", `{"code":"X","p":"` + strings.Repeat("é", 4077) + `"}`, "", ""},
		{"4097 units of non-ASCII", `{"code":"X","p":"` + strings.Repeat("é", 4078) + `"}`, "", "serializes to 4097 UTF-16 code units, over 4096"},
		{"an astral character is two units", `{"code":"X","p":"` + strings.Repeat("😀", 2039) + `"}`, "", "serializes to 4097 UTF-16 code units, over 4096"},
		{"escapes are re-serialized", `{"code":"X","p":"` + strings.Repeat(`\u0041`, 4000) + `"}`, "", ""},
		{"deep nesting does not fit", `{"code":"X","p":` + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + `}`, "", "serializes to 6017 UTF-16 code units, over 4096"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateError([]byte(c.in))
			if c.reason == "" {
				if err != nil {
					t.Fatalf("ValidateError = %v, want valid", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("ValidateError = %v, want *ValidationError", err)
			}
			if ve.Pointer != c.ptr || ve.Reason != c.reason {
				t.Errorf("got (%q, %q), want (%q, %q)", ve.Pointer, ve.Reason, c.ptr, c.reason)
			}
		})
	}
	var ie *InputError
	if err := ValidateError([]byte(`{"code":`)); !errors.As(err, &ie) {
		t.Errorf("ValidateError(non-JSON) = %v, want *InputError", err)
	}
}

func TestDecide(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name, in string
		kind     ActionKind
		delay    *float64
		fromCode bool
	}{
		{"transient with retry_after", `{"code":"X","recovery":"transient","retry_after":5}`, ActionRetry, f(5), false},
		{"fraction kept", `{"code":"X","recovery":"transient","retry_after":2.5}`, ActionRetry, f(2.5), false},
		{"below 1 clamps to 1", `{"code":"X","recovery":"transient","retry_after":0.2}`, ActionRetry, f(1), false},
		{"zero clamps to 1", `{"code":"X","recovery":"transient","retry_after":0}`, ActionRetry, f(1), false},
		{"negative clamps to 1", `{"code":"X","recovery":"transient","retry_after":-30}`, ActionRetry, f(1), false},
		{"underflow clamps to 1", `{"code":"X","recovery":"transient","retry_after":1e-400}`, ActionRetry, f(1), false},
		{"above 3600 clamps to 3600", `{"code":"X","recovery":"transient","retry_after":86400}`, ActionRetry, f(3600), false},
		{"bounds kept", `{"code":"X","recovery":"transient","retry_after":3600}`, ActionRetry, f(3600), false},
		{"non-finite is absent", `{"code":"X","recovery":"transient","retry_after":1e400}`, ActionRetry, nil, false},
		{"negative non-finite is absent", `{"code":"X","recovery":"transient","retry_after":-1e400}`, ActionRetry, nil, false},
		{"string is absent", `{"code":"X","recovery":"transient","retry_after":"5"}`, ActionRetry, nil, false},
		{"null is absent", `{"code":"X","recovery":"transient","retry_after":null}`, ActionRetry, nil, false},
		{"absent", `{"code":"X","recovery":"transient"}`, ActionRetry, nil, false},
		{"correctable", `{"code":"X","recovery":"correctable","retry_after":5}`, ActionFixRequest, nil, false},
		{"terminal", `{"code":"RATE_LIMITED","recovery":"terminal"}`, ActionEscalate, nil, false},
		{"unknown recovery escalates", `{"code":"RATE_LIMITED","recovery":"deferred"}`, ActionEscalate, nil, false},
		{"recovery is case-sensitive", `{"code":"RATE_LIMITED","recovery":"Transient"}`, ActionEscalate, nil, false},
		{"truthy non-string recovery escalates", `{"code":"RATE_LIMITED","recovery":1}`, ActionEscalate, nil, false},
		{"object recovery escalates", `{"code":"RATE_LIMITED","recovery":{}}`, ActionEscalate, nil, false},
		{"empty recovery uses the code", `{"code":"RATE_LIMITED","recovery":"","retry_after":9}`, ActionRetry, f(9), true},
		{"null recovery uses the code", `{"code":"BUDGET_TOO_LOW","recovery":null}`, ActionFixRequest, nil, true},
		{"false recovery uses the code", `{"code":"ACCOUNT_SUSPENDED","recovery":false}`, ActionEscalate, nil, true},
		{"absent recovery, transient code", `{"code":"CONFLICT"}`, ActionRetry, nil, true},
		{"absent recovery, table beyond the seed's 20", `{"code":"ACCOUNT_MOVED"}`, ActionFixRequest, nil, true},
		{"absent recovery, unknown code is terminal", `{"code":"X_VENDOR_UNKNOWN"}`, ActionEscalate, nil, true},
		{"absent recovery, prototype name is unknown", `{"code":"constructor"}`, ActionEscalate, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, verr := validateAdcpError([]byte(c.in), "")
			if verr != nil {
				t.Fatal(verr)
			}
			a := Decide(*e)
			if a.Kind != c.kind {
				t.Errorf("kind = %q, want %q", a.Kind, c.kind)
			}
			switch {
			case (a.DelaySeconds == nil) != (c.delay == nil):
				t.Errorf("delay = %v, want %v", a.DelaySeconds, c.delay)
			case a.DelaySeconds != nil && *a.DelaySeconds != *c.delay:
				t.Errorf("delay = %v, want %v", *a.DelaySeconds, *c.delay)
			}
			if a.FromCodeTable != c.fromCode {
				t.Errorf("from code table = %v, want %v", a.FromCodeTable, c.fromCode)
			}
		})
	}
}

// seedCodeRecovery is transport-errors.mdx's CODE_RECOVERY constant.
var seedCodeRecovery = map[string]Recovery{
	"RATE_LIMITED": RecoveryTransient, "SERVICE_UNAVAILABLE": RecoveryTransient, "CONFLICT": RecoveryTransient,
	"INVALID_REQUEST": RecoveryCorrectable, "AUTH_REQUIRED": RecoveryCorrectable, "POLICY_VIOLATION": RecoveryCorrectable,
	"PRODUCT_NOT_FOUND": RecoveryCorrectable, "PRODUCT_UNAVAILABLE": RecoveryCorrectable, "PROPOSAL_EXPIRED": RecoveryCorrectable,
	"BUDGET_TOO_LOW": RecoveryCorrectable, "CREATIVE_REJECTED": RecoveryCorrectable, "UNSUPPORTED_FEATURE": RecoveryCorrectable,
	"AUDIENCE_TOO_SMALL": RecoveryCorrectable, "ACCOUNT_SETUP_REQUIRED": RecoveryCorrectable, "ACCOUNT_AMBIGUOUS": RecoveryCorrectable,
	"COMPLIANCE_UNSATISFIED": RecoveryCorrectable, "ACCOUNT_NOT_FOUND": RecoveryTerminal, "ACCOUNT_PAYMENT_REQUIRED": RecoveryTerminal,
	"ACCOUNT_SUSPENDED": RecoveryTerminal, "BUDGET_EXHAUSTED": RecoveryTerminal,
}

func TestCodeTableCoversSeed(t *testing.T) {
	for code, want := range seedCodeRecovery {
		if got, ok := CodeRecovery(code); !ok || got != want {
			t.Errorf("%s: table has %q, seed has %q", code, got, want)
		}
	}
}

func TestActionJSON(t *testing.T) {
	d := 2.5
	cases := []struct {
		a    Action
		want string
	}{
		{Action{Kind: ActionRetry, DelaySeconds: &d}, `{"kind":"retry","delay_seconds":2.5}`},
		{Action{Kind: ActionRetry}, `{"kind":"retry","delay_seconds":null}`},
		{Action{Kind: ActionFixRequest}, `{"kind":"fix_request"}`},
		{Action{Kind: ActionEscalate}, `{"kind":"escalate"}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.a)
		if err != nil || string(b) != c.want {
			t.Errorf("Marshal = %s, %v; want %s", b, err, c.want)
		}
	}
}

func TestJSONRPCError(t *testing.T) {
	cases := []struct {
		name, in string
		code     string
		ptr      string
		rejected string
	}{
		{"data.adcp_error", `{"code":-32029,"message":"x","data":{"adcp_error":{"code":"RATE_LIMITED","retry_after":10}}}`, "RATE_LIMITED", "/data/adcp_error", ""},
		{"no data", `{"code":-32600,"message":"Invalid Request"}`, "", "", ""},
		{"string data", `{"code":-32029,"data":"adcp_error"}`, "", "", ""},
		{"null adcp_error", `{"code":-32029,"data":{"adcp_error":null}}`, "", "", ""},
		{"invalid adcp_error", `{"code":-32029,"data":{"adcp_error":{"code":7}}}`, "", "", "/data/adcp_error/code"},
		{"error member not an object", `"rate limited"`, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, err := JSONRPCError([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			code := ""
			if x.Error != nil {
				code = x.Error.Code
				if x.Path != PathJSONRPCError {
					t.Errorf("path = %q", x.Path)
				}
			} else if x.Path != PathNone {
				t.Errorf("path = %q, want none", x.Path)
			}
			if code != c.code || x.Pointer != c.ptr {
				t.Errorf("got (%q, %q), want (%q, %q)", code, x.Pointer, c.code, c.ptr)
			}
			rej := ""
			if x.Rejected != nil {
				rej = x.Rejected.Pointer
			}
			if rej != c.rejected {
				t.Errorf("rejected at %q, want %q", rej, c.rejected)
			}
		})
	}
}

func TestFromJSONRPCResponse(t *testing.T) {
	cases := []struct {
		name string
		tr   Transport
		in   string
		want string // Outcome JSON, or "error: <msg>"
		ptr  string
	}{
		{"mcp result success", TransportMCP, `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"a":1}}}`,
			`{"path":"structured_content","data":{"a":1},"error":null,"action":null}`, "/result/structuredContent"},
		{"mcp result error", TransportMCP, `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"structuredContent":{"adcp_error":{"code":"RATE_LIMITED","retry_after":0.5,"recovery":"transient"}}}}`,
			`{"path":"structured_content","data":null,"error":{"code":"RATE_LIMITED","retry_after":0.5,"recovery":"transient"},"action":{"kind":"retry","delay_seconds":1}}`, "/result/structuredContent/adcp_error"},
		{"mcp jsonrpc error", TransportMCP, `{"jsonrpc":"2.0","id":1,"error":{"code":-32028,"message":"x","data":{"adcp_error":{"code":"AUTH_MISSING","recovery":"correctable"}}}}`,
			`{"path":"jsonrpc_error","data":null,"error":{"code":"AUTH_MISSING","recovery":"correctable"},"action":{"kind":"fix_request"}}`, "/error/data/adcp_error"},
		{"a2a jsonrpc error", TransportA2A, `{"jsonrpc":"2.0","id":1,"error":{"code":-32027,"data":{"adcp_error":{"code":"SERVICE_UNAVAILABLE"}}}}`,
			`{"path":"jsonrpc_error","data":null,"error":{"code":"SERVICE_UNAVAILABLE"},"action":{"kind":"retry","delay_seconds":null}}`, "/error/data/adcp_error"},
		{"a2a result error wins over data", TransportA2A, `{"jsonrpc":"2.0","id":1,"result":{"status":{"state":"failed"},"artifacts":[{"parts":[{"data":{"adcp_error":{"code":"ACCOUNT_SUSPENDED","recovery":"terminal"}}}]}]}}`,
			`{"path":"artifact","data":null,"error":{"code":"ACCOUNT_SUSPENDED","recovery":"terminal"},"action":{"kind":"escalate"}}`, "/result/artifacts/0/parts/0/data/adcp_error"},
		{"a2a result data", TransportA2A, `{"jsonrpc":"2.0","id":1,"result":{"task":{"status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"parts":[{"data":{"media_buy_id":"mb"}}]}]}}}`,
			`{"path":"artifact","data":{"media_buy_id":"mb"},"error":null,"action":null}`, "/result/task/artifacts/0/parts/0/data"},
		{"a2a wrapper", TransportA2A, `{"jsonrpc":"2.0","id":1,"result":{"status":{"state":"completed"},"artifacts":[{"parts":[{"data":{"response":{}}}]}]}}`,
			"error: wrapper_detected: /result/artifacts/0/parts/0/data is a {\"response\": {…}} framework wrapper", ""},
		{"null error beside result", TransportMCP, `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{}},"error":null}`,
			`{"path":"structured_content","data":{},"error":null,"action":null}`, "/result/structuredContent"},
		{"result not an object", TransportMCP, `{"jsonrpc":"2.0","id":1,"result":"ok"}`,
			`{"path":"none","data":null,"error":null,"action":null}`, ""},
		{"both result and error", TransportMCP, `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1}}`,
			"error: the JSON-RPC response has both result and error", ""},
		{"neither", TransportMCP, `{"jsonrpc":"2.0","id":1}`,
			"error: the JSON-RPC response has neither result nor error", ""},
		{"unknown transport", Transport("grpc"), `{"result":{}}`, `error: unknown transport "grpc"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := FromJSONRPCResponse(c.tr, []byte(c.in))
			if strings.HasPrefix(c.want, "error: ") {
				if err == nil || err.Error() != c.want[len("error: "):] {
					t.Fatalf("error = %v, want %s", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("outcome = %s\nwant      %s", b, c.want)
			}
			if out.Pointer != c.ptr {
				t.Errorf("pointer = %q, want %q", out.Pointer, c.ptr)
			}
		})
	}
}
