package suites

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func TestEveryCheckIsACatalogueRuleOnItsTransport(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Checks() {
		if _, err := catalogue.Labels(c.ID, c.Transport); err != nil {
			t.Errorf("%s: %v", c.ID, err)
		}
		key := string(c.Transport) + " " + c.Text
		if seen[key] || seen[c.ID+string(c.Transport)] {
			t.Errorf("%s: duplicate judge %q", c.ID, c.Text)
		}
		seen[key], seen[c.ID+string(c.Transport)] = true, true
	}
}

// Every catalogue family has its judges registered, each of them a rule of
// that family, and nothing is registered for a family the catalogue lacks:
// a family left out of familyChecks fails here, not silently in a run.
func TestEveryCatalogueFamilyHasItsChecks(t *testing.T) {
	known := map[string]bool{}
	for _, f := range catalogue.Families() {
		known[f.ID] = true
		checks, ok := familyChecks[f.ID]
		if !ok {
			t.Errorf("family %s: no checks registered in familyChecks", f.ID)
			continue
		}
		cs := checks()
		if len(cs) == 0 {
			t.Errorf("family %s: no checks", f.ID)
		}
		for _, c := range cs {
			if fam, _, _ := strings.Cut(c.ID, "-"); fam != f.ID {
				t.Errorf("family %s holds %s, a rule of another family", f.ID, c.ID)
			}
		}
	}
	for id := range familyChecks {
		if !known[id] {
			t.Errorf("familyChecks registers %s, which the catalogue does not list", id)
		}
	}
	if got, want := len(families()), len(catalogue.Families()); got != want {
		t.Errorf("%d families judged, the catalogue lists %d", got, want)
	}
}

func TestBadAuthority(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/x":        "",
		"https://user@example.com/x":   "",
		"https://[2001:db8::1]:443/x":  "",
		"file:///etc/hosts":            "",
		"https://@/x":                  "has userinfo without a host",
		"https:///x":                   "has an empty host",
		"https://:443/x":               "has an empty host",
		"https://[2001:db8::1/preview": "has an unclosed IPv6 bracket",
		"https://a]b/":                 "has a stray IPv6 bracket",
	} {
		if got := badAuthority(in); got != want {
			t.Errorf("badAuthority(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsRFC3339(t *testing.T) {
	for in, want := range map[string]bool{
		"2026-11-22T12:00:00Z":          true,
		"2026-11-22t12:00:00.123+01:00": true,
		"2024-02-29T00:00:00Z":          true,
		"2016-12-31T23:59:60Z":          true,
		"2025-02-29T00:00:00Z":          false,
		"2026-11-22 12:00:00Z":          false,
		"2026-11-22T12:00:00":           false,
		"22/11/2026 12:00:00":           false,
		"2026-13-01T00:00:00Z":          false,
	} {
		if got := isRFC3339(in); got != want {
			t.Errorf("isRFC3339(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestLeak(t *testing.T) {
	for in, want := range map[string]string{
		"No media buy \"mb_1\".":                         "",
		"Lookup failed at /srv/seller/internal/db.go:88": "a stack trace",
		"open /var/lib/seller/config.yaml: denied":       "a file path",
		`pq: relation "media_buys" does not exist`:       "an SQL fragment",
		"upstream db-7.prod.internal timed out":          "an internal hostname",
		"upstream 10.0.3.7 refused":                      "a private IP address",
		"see https://127.0.0.1:8080/policies":            "",
		"Rate limited, retry in 5s.":                     "",
		// Prose a seller may send is not a leak.
		"Select a product from the list returned by get_products.": "",
		"Update the campaign set-up, then retry.":                  "",
		"Delete from your plan the packages over budget.":          "",
		"Flights start at noon (UTC+2:00).":                        "",
		"Insert into the brief a budget.":                          "",
		// The same words as SQL are.
		"SELECT id, name FROM media_buys WHERE id = $1": "an SQL fragment",
		"select * from media_buys":                      "an SQL fragment",
		"select id from media_buys where id = 7":        "an SQL fragment",
		`insert into media_buys (id) values (1)`:        "an SQL fragment",
		"update media_buys set status = 'x'":            "an SQL fragment",
		"delete from media_buys where id = 1":           "an SQL fragment",
		"at Object.handler (server.js:12:5)":            "a stack trace",
		"at com.seller.Db.find(Db.java:42)":             "a stack trace",
	} {
		if got := leak(in, "127.0.0.1", false); got != want {
			t.Errorf("leak(%q) = %q, want %q", in, got, want)
		}
	}
	if got := leak("10.0.3.1", "", true); got != "" {
		t.Errorf("a four-part version read as an IP: %q", got)
	}
}

// probeShape is a recorded call the judges read: its probe ID after the
// transport, its kind and its purposes.
type probeShape struct {
	id   string
	kind evidence.Kind
	ps   []evidence.Purpose
}

// probeShapes are calls of every kind and purpose the judges read.
var probeShapes = []probeShape{
	{"initialize", evidence.KindInitialize, nil},
	{"tools/list", evidence.KindToolsList, nil},
	{"card", evidence.KindHTTPGet, []evidence.Purpose{evidence.PurposeDiscovery}},
	{"card/mcp.json", evidence.KindHTTPGet, []evidence.Purpose{evidence.PurposeDiscovery}},
	{capabilitiesProbe, evidence.KindToolCall, []evidence.Purpose{evidence.PurposeValid, evidence.PurposeNoContext}},
	{"ver/capabilities", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeDiscovery}},
	{"ver/pin/3.1", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeVersionPin}},
	{"get_products/valid", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeValid}},
	{"get_products/context", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeContext, evidence.PurposeEnvelopeFields}},
	{"get_products/envelope_fields", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeEnvelopeFields}},
	{"get_products/error_version", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeErrorVersion, evidence.PurposeContext}},
	{"get_products/error_major_version", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeErrorMajorVersion}},
	{"get_products/error_wrong_type", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeErrorWrongType}},
	{"get_task_status/error_unknown_task", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeErrorUnknownTask}},
	{"get_products/stream", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeStream}},
	{"rate_burst/1", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeRateBurst}},
	{"auth/no_credential", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeAuthNone}},
	{"auth/no_credential/capabilities", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeAuthCapabilities}},
	{"auth/random_credential", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeAuthRandom}},
	{"idem/missing_key", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeIdemMissingKey}},
	{"idem/first", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeIdemFirst}},
	{"idem/replay", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeIdemReplay}},
	{"idem/conflict", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeIdemConflict}},
	{"task/get_products/create", evidence.KindTask, nil},
	{"task/get_products/get/01", evidence.KindTask, nil},
	{"task/get_products/result", evidence.KindToolCall, nil},
	{"task/isolation/get", evidence.KindTask, nil},
	{"task/ttl/create", evidence.KindTask, []evidence.Purpose{evidence.PurposeTaskTTL}},
	{"hook/async/hmac-sha256", evidence.KindToolCall, []evidence.Purpose{evidence.PurposeHookAsync}},
	{"hook/async/hmac-sha256/deliveries", evidence.KindWebhook, []evidence.Purpose{evidence.PurposeHookAsync}},
}

// FuzzJudges feeds arbitrary bytes to every judge as the reply of every
// kind of call: no judge may panic, and every verdict is one of the four
// outcomes, a failure with at least one finding.
func FuzzJudges(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"status\":\"completed\"}"}],"structuredContent":{"status":"completed","context":{"a":1}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"structuredContent":{"adcp_error":{"code":"X","message":1,"retry_after":1e400,"details":{"supported_versions":"3"}}}}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32028,"message":"no","data":{"adcp_error":{"code":"AUTH_REQUIRED"}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get_products","inputSchema":{"additionalProperties":false}}]}}`,
		`{"result":{"content":"x","isError":"true","structuredContent":[1]}}`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`,
		`{"result":{"structuredContent":{"details":{"policy_url":"https://[::1"},"policy_url":"javascript:alert(1)"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"task":{"status":{"state":"TASK_STATE_FAILED"},"artifacts":[{"parts":[{"data":{"adcp_error":{"code":"X"}}},{"data":{"response":{}}}]}]}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"kind":"status-update","status":{"state":"working","message":{"parts":[{"kind":"data","data":{"status":"submitted"}}]}},"final":false}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"artifactUpdate":{"taskId":"t","artifact":{"artifactId":"a","metadata":{"adcp_task_id":1},"parts":[{"data":{"status":"submitted"}}]},"append":true}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"kind":"task","status":{"state":3},"artifacts":{"x":1}}}`,
		`{"url":"/rpc","skills":[{"id":"get_products"}],"capabilities":{"extensions":[{"uri":"https://adcontextprotocol.org/extensions/adcp/v3","params":{"x":1}}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		s := evidence.NewStore(evidence.Target{MCP: "https://seller.example.com/mcp", Credential: true})
		var result, rpcErr json.RawMessage
		var m map[string]json.RawMessage
		if json.Unmarshal(msg, &m) == nil {
			result, rpcErr = m["result"], m["error"]
		}
		ctx := json.RawMessage(`{"adcp_conform":{"nonce":"n"}}`)
		ev := wire.Exchange{SSE: true, Events: []wire.Event{{Data: string(msg), HasData: true}, {Data: `{"jsonrpc":"2.0","id":1,"result":` + string(result) + `}`, HasData: true}}}
		for _, p := range probeShapes {
			for _, t := range []evidence.Transport{evidence.MCP, evidence.A2A} {
				s.Add(evidence.Call{ProbeID: string(t) + "/" + p.id, Transport: t, Kind: p.kind, Tool: "get_products", Purposes: p.ps,
					Context: ctx, Message: msg, Result: result, RPCError: rpcErr, Body: msg, HTTPStatus: 200, Exchanges: []wire.Exchange{ev}})
			}
		}
		for _, v := range Judge(s, Options{Transports: []catalogue.Transport{catalogue.MCP, catalogue.A2A}}) {
			switch v.Outcome {
			case Pass, Skip, HarnessError:
			case Fail:
				if len(v.Findings) == 0 {
					t.Errorf("%s fails without findings: %s", v.Rule, v.Message)
				}
			default:
				t.Errorf("%s: unknown outcome %q", v.Rule, v.Outcome)
			}
		}
	})
}
