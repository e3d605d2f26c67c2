package suites

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The URL tables. Shapes: transport-errors.mdx (ACCOUNT_SETUP_REQUIRED
// details.setup_url, CREATIVE_REJECTED / POLICY_VIOLATION
// details.policy_url, "URL validation"); a2a-response-extraction.mdx (FilePart URI Validation:
// a 1.0 Part with url, a v0.3 kind "file" part with file.uri; Auth Challenge
// URL Validation: a DataPart with challenge_url in status.message.parts of
// an auth-required task).

// setupErr is an ACCOUNT_SETUP_REQUIRED error body (transport-errors.mdx)
// whose details.setup_url is u.
func setupErr(u string) string {
	return `{"adcp_error":{"code":"ACCOUNT_SETUP_REQUIRED","message":"Account setup is required","recovery":"correctable","details":{"setup_url":` + quoteJSON(u) + `,"setup_steps":["Accept terms of service"]}}}`
}

// policyErr is a POLICY_VIOLATION error body whose details.policy_url is u.
func policyErr(u string) string {
	return `{"adcp_error":{"code":"POLICY_VIOLATION","message":"Targeting is restricted","recovery":"correctable","details":{"policy_id":"targeting-restrictions-v3","policy_url":` + quoteJSON(u) + `}}}`
}

// mcpErrURL is an MCP error result of an error probe carrying body.
func mcpErrURL(body string) evidence.Call {
	return mcpBody("mcp/get_products/unknown_id", "get_products", body, true, evidence.PurposeErrorUnknownID)
}

// mcpTextOnly is an MCP result whose only payload is body as a JSON text
// item (the text fallback, no structuredContent).
func mcpTextOnly(probeID, body string, isError bool) evidence.Call {
	flag := ""
	if isError {
		flag = `,"isError":true`
	}
	return mcpResult(probeID, "get_products", `{"content":[{"type":"text","text":`+quoteJSON(body)+`}]`+flag+`}`, evidence.PurposeErrorUnknownID)
}

// mcpTextDiffers is an MCP error result whose structuredContent is sc and
// whose JSON text item is text: a client may read either.
func mcpTextDiffers(sc, text string) evidence.Call {
	return mcpResult("mcp/get_products/unknown_id", "get_products",
		`{"content":[{"type":"text","text":`+quoteJSON(text)+`}],"structuredContent":`+sc+`,"isError":true}`, evidence.PurposeErrorUnknownID)
}

// a2aFailed is an A2A 0.3 failed task whose artifact's DataPart is body.
func a2aFailed(body string) evidence.Call {
	return a2aResult("a2a/get_products/unknown_id", "get_products", a2aTask("failed", body), evidence.PurposeErrorUnknownID)
}

// a2aFile03 is an A2A 0.3 completed task whose artifact holds a DataPart and
// a FilePart (kind "file", file.uri) of uri.
func a2aFile03(uri string) evidence.Call {
	return a2aResult("a2a/get_products/valid", "get_products",
		`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[`+
			`{"kind":"data","data":{"status":"completed","products":[]}},`+
			`{"kind":"file","file":{"uri":`+quoteJSON(uri)+`,"mimeType":"application/pdf","name":"media-kit.pdf"}}]}]}`, evidence.PurposeValid)
}

// a2aFile10 is an A2A 1.0 SendMessage result ({"task": …}) whose artifact
// holds a 1.0 FilePart (a Part with url) of u.
func a2aFile10(u string) evidence.Call {
	return a2aResult("a2a/get_products/valid", "get_products",
		`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a1","parts":[`+
			`{"url":`+quoteJSON(u)+`,"mediaType":"application/pdf","filename":"media-kit.pdf"},`+
			`{"data":{"status":"completed","products":[]}}]}]}}`, evidence.PurposeValid)
}

// a2aChallenge is an A2A 1.0 auth-required task whose status message
// carries the auth challenge DataPart (a2a-response-extraction.mdx) with challenge_url u.
func a2aChallenge(u string) evidence.Call {
	return a2aResult("a2a/get_products/valid", "get_products",
		`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_AUTH_REQUIRED","message":{"messageId":"m1","role":"ROLE_AGENT","parts":[`+
			`{"data":{"status":"auth-required","auth_scheme":"oauth2","challenge_url":`+quoteJSON(u)+`,"scopes":["read"]}}]}}}}`, evidence.PurposeValid)
}

// a2aTextPart is an A2A 0.3 failed task whose artifact's only part is a
// TextPart holding body as JSON text.
func a2aTextPart(body string) evidence.Call {
	return a2aResult("a2a/get_products/unknown_id", "get_products",
		`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"failed"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":`+quoteJSON(body)+`}]}]}`,
		evidence.PurposeErrorUnknownID)
}

// a2aStreamURL is an A2A 0.3 stream whose first event is an auth-required
// status update carrying challenge_url u and whose last is the completed
// task: the URL sits only in an event before the final one.
func a2aStreamURL(u string) evidence.Call {
	first := `{"jsonrpc":"2.0","id":1,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","final":false,"status":{"state":"auth-required","message":{"kind":"message","messageId":"m1","role":"agent","parts":[{"kind":"data","data":{"status":"auth-required","challenge_url":` + quoteJSON(u) + `}}]}}}}`
	result := a2aTask("completed", `{"status":"completed","products":[]}`)
	last := `{"jsonrpc":"2.0","id":1,"result":` + result + `}`
	c := a2aResult("a2a/get_products/stream", "get_products", result, evidence.PurposeStream)
	c.Message = json.RawMessage(last)
	c.Exchanges = []wire.Exchange{{SSE: true, Events: []wire.Event{{Data: first, HasData: true}, {Data: last, HasData: true}}}}
	return c
}

var (
	urlNotRun  = notRun("mcp/get_products/unknown_id", evidence.MCP, evidence.KindToolCall, "get_products is not listed", evidence.PurposeErrorUnknownID)
	urlHarness = harnessFailed("mcp/get_products/unknown_id", evidence.MCP, evidence.KindToolCall, "connection reset", evidence.PurposeErrorUnknownID)
	urlNoURL   = mcpBody("mcp/get_products/valid", "get_products", `{"status":"completed","products":[]}`, false, evidence.PurposeValid)

	a2aURLNotRun  = notRun("a2a/get_products/unknown_id", evidence.A2A, evidence.KindToolCall, "get_products is not a skill", evidence.PurposeErrorUnknownID)
	a2aURLHarness = harnessFailed("a2a/get_products/unknown_id", evidence.A2A, evidence.KindToolCall, "connection reset", evidence.PurposeErrorUnknownID)
)

func TestURL01Table(t *testing.T) {
	sc := "/result/structuredContent/adcp_error/details/"
	runJudgeTable(t, "URL-01", catalogue.MCP, []judgeCase{
		{name: "https setup_url passes", calls: []evidence.Call{mcpErrURL(setupErr("https://seller.example.com/setup/acct_123"))}, want: Pass},
		{name: "https policy_url passes", calls: []evidence.Call{mcpErrURL(policyErr("https://seller.example.com/policies/targeting"))}, want: Pass},
		{name: "an upper-case HTTPS scheme passes (schemes are case-insensitive)", calls: []evidence.Call{mcpErrURL(setupErr("HTTPS://seller.example.com/setup"))}, want: Pass},
		{name: "http policy_url fails", calls: []evidence.Call{mcpErrURL(policyErr("http://seller.example.com/policies/targeting"))}, want: Fail, ptr: sc + "policy_url", msg: `"http:"`},
		{name: "javascript: fails", calls: []evidence.Call{mcpErrURL(setupErr("javascript:alert(1)"))}, want: Fail, ptr: sc + "setup_url", msg: `"javascript:"`},
		{name: "data: fails", calls: []evidence.Call{mcpErrURL(setupErr("data:text/html,<b>x</b>"))}, want: Fail, ptr: sc + "setup_url", msg: `"data:"`},
		{name: "file: fails", calls: []evidence.Call{mcpErrURL(setupErr("file:///etc/passwd"))}, want: Fail, ptr: sc + "setup_url", msg: `"file:"`},
		{name: "userinfo fails", calls: []evidence.Call{mcpErrURL(setupErr("https://user:pass@seller.example.com/setup"))}, want: Fail, ptr: sc + "setup_url", msg: "userinfo"},
		{name: "a relative reference fails", calls: []evidence.Call{mcpErrURL(setupErr("/setup/acct_123"))}, want: Fail, ptr: sc + "setup_url", msg: "not an absolute https URL"},
		{name: "a bad URL in the text fallback alone fails at the text item", calls: []evidence.Call{mcpTextOnly("mcp/get_products/unknown_id", policyErr("http://seller.example.com/p"), true)},
			want: Fail, ptr: "/result/content/0/text#/adcp_error/details/policy_url"},
		{name: "a bad URL in a text item beside a good structuredContent fails (a client may read either)",
			calls: []evidence.Call{mcpTextDiffers(policyErr("https://seller.example.com/p"), policyErr("http://seller.example.com/p"))},
			want:  Fail, ptr: "/result/content/0/text#/adcp_error/details/policy_url"},
		{name: "a challenge_url at any depth is judged", calls: []evidence.Call{mcpBody("mcp/get_products/valid", "get_products",
			`{"status":"auth-required","auth":{"challenge_url":"http://seller.example.com/oauth"}}`, false, evidence.PurposeValid)},
			want: Fail, ptr: "/result/structuredContent/auth/challenge_url"},
		{name: "http in a field no buyer follows is not URL-01's", calls: []evidence.Call{mcpErrURL(setupErr("https://seller.example.com/s")),
			mcpBody("mcp/get_products/valid", "get_products", `{"status":"completed","products":[{"product_id":"p1","preview_url":"http://cdn.example.net/p1"}]}`, false, evidence.PurposeValid)},
			want: Pass},
		{name: "no followable URL skips", calls: []evidence.Call{urlNoURL}, want: Skip, msg: "no followable URL"},
		{name: "an error probe not run skips with its reason", calls: []evidence.Call{urlNotRun}, want: Skip, msg: "get_products is not listed"},
		{name: "no evidence skips", want: Skip, msg: "no followable URL"},
		{name: "a harness error on an error probe is the harness's", calls: []evidence.Call{urlHarness}, want: HarnessError, msg: "connection reset"},
	})
	runJudgeTable(t, "URL-01", catalogue.A2A, []judgeCase{
		{name: "https setup_url in the failed task's DataPart passes", calls: []evidence.Call{a2aFailed(setupErr("https://seller.example.com/setup"))}, want: Pass},
		{name: "a v0.3 FilePart with an https file.uri passes", calls: []evidence.Call{a2aFile03("https://seller.example.com/kit.pdf")}, want: Pass},
		{name: "a 1.0 FilePart with an https url passes", calls: []evidence.Call{a2aFile10("https://seller.example.com/kit.pdf")}, want: Pass},
		{name: "an https challenge_url passes", calls: []evidence.Call{a2aChallenge("https://seller.example.com/oauth/authorize")}, want: Pass},
		{name: "http setup_url in the DataPart fails", calls: []evidence.Call{a2aFailed(setupErr("http://seller.example.com/setup"))},
			want: Fail, ptr: "/result/artifacts/0/parts/0/data/adcp_error/details/setup_url"},
		{name: "a v0.3 FilePart with an http file.uri fails", calls: []evidence.Call{a2aFile03("http://seller.example.com/kit.pdf")},
			want: Fail, ptr: "/result/artifacts/0/parts/1/file/uri", msg: `"http:"`},
		{name: "a 1.0 FilePart with a javascript: url fails", calls: []evidence.Call{a2aFile10("javascript:alert(1)")},
			want: Fail, ptr: "/result/task/artifacts/0/parts/0/url", msg: `"javascript:"`},
		{name: "a 1.0 FilePart with a data: url fails", calls: []evidence.Call{a2aFile10("data:application/pdf;base64,AAAA")},
			want: Fail, ptr: "/result/task/artifacts/0/parts/0/url", msg: `"data:"`},
		{name: "a challenge_url with userinfo fails", calls: []evidence.Call{a2aChallenge("https://user:pw@seller.example.com/oauth")},
			want: Fail, ptr: "/result/task/status/message/parts/0/data/challenge_url", msg: "userinfo"},
		{name: "a TextPart holding the error as JSON is read too", calls: []evidence.Call{a2aTextPart(policyErr("http://seller.example.com/p"))},
			want: Fail, ptr: "/result/artifacts/0/parts/0/text#/adcp_error/details/policy_url"},
		{name: "every event of a stream is read", calls: []evidence.Call{a2aStreamURL("file:///tmp/x")},
			want: Fail, ptr: "/events/0/result/status/message/parts/0/data/challenge_url", msg: `"file:"`},
		{name: "a stream with an https challenge passes", calls: []evidence.Call{a2aStreamURL("https://seller.example.com/oauth")}, want: Pass},
		{name: "no followable URL skips", calls: []evidence.Call{a2aResult("a2a/get_products/valid", "get_products", a2aTask("completed", `{"status":"completed","products":[]}`), evidence.PurposeValid)},
			want: Skip, msg: "no followable URL"},
		{name: "an error probe not run skips with its reason", calls: []evidence.Call{a2aURLNotRun}, want: Skip, msg: "not a skill"},
		{name: "MCP evidence is not A2A's", calls: []evidence.Call{mcpErrURL(setupErr("http://seller.example.com/s"))}, want: Skip},
		{name: "a harness error is the harness's", calls: []evidence.Call{a2aURLHarness}, want: HarnessError},
	})
}

func TestURL02Table(t *testing.T) {
	sc := "/result/structuredContent/adcp_error/details/"
	runJudgeTable(t, "URL-02", catalogue.MCP, []judgeCase{
		{name: "the agent's own host passes", calls: []evidence.Call{mcpErrURL(setupErr("https://seller.example.com/setup"))}, want: Pass},
		{name: "another host of the agent's registrable domain passes", calls: []evidence.Call{mcpErrURL(setupErr("https://accounts.example.com/setup"))}, want: Pass},
		{name: "a foreign domain fails", calls: []evidence.Call{mcpErrURL(policyErr("https://policies.example-elsewhere.net/p"))},
			want: Fail, ptr: sc + "policy_url", msg: `"policies.example-elsewhere.net"`},
		{name: "a look-alike suffix fails", calls: []evidence.Call{mcpErrURL(setupErr("https://seller.example.com.evil.net/setup"))}, want: Fail, ptr: sc + "setup_url"},
		{name: "a domain the run allows passes", calls: []evidence.Call{mcpErrURL(policyErr("https://policies.example-elsewhere.net/p"))},
			opts: Options{AllowedDomains: []string{"example-elsewhere.net"}}, want: Pass},
		{name: "a domain on a shared public suffix is not the agent's", target: &evidence.Target{MCP: "https://seller.github.io/mcp"},
			calls: []evidence.Call{mcpErrURL(setupErr("https://other.github.io/setup"))}, want: Fail, ptr: sc + "setup_url"},
		{name: "a foreign URL only in the text fallback fails", calls: []evidence.Call{mcpTextDiffers(policyErr("https://seller.example.com/p"), policyErr("https://evil.example.org/p"))},
			want: Fail, ptr: "/result/content/0/text#/adcp_error/details/policy_url"},
		{name: "a URL without a host is URL-01's or URL-03's", calls: []evidence.Call{mcpErrURL(setupErr("javascript:alert(1)"))}, want: Skip},
		{name: "no followable URL skips", calls: []evidence.Call{urlNoURL}, want: Skip, msg: "no followable URL"},
		{name: "a harness error is the harness's", calls: []evidence.Call{urlHarness}, want: HarnessError},
	})
	runJudgeTable(t, "URL-02", catalogue.A2A, []judgeCase{
		{name: "a FilePart on the agent's domain passes", calls: []evidence.Call{a2aFile10("https://cdn.example.com/kit.pdf")}, want: Pass},
		{name: "a v0.3 FilePart off the domain fails", calls: []evidence.Call{a2aFile03("https://files.example-elsewhere.net/kit.pdf")},
			want: Fail, ptr: "/result/artifacts/0/parts/1/file/uri"},
		{name: "a challenge_url off the domain fails", calls: []evidence.Call{a2aChallenge("https://login.phish.example.org/oauth")},
			want: Fail, ptr: "/result/task/status/message/parts/0/data/challenge_url"},
		{name: "the A2A target's domain is the one that counts", target: &evidence.Target{MCP: "https://mcp.other.example.org/mcp", A2A: "https://a2a.example.com/a2a"},
			calls: []evidence.Call{a2aFile10("https://cdn.example.com/kit.pdf")}, want: Pass},
		{name: "no followable URL skips", calls: []evidence.Call{a2aURLNotRun}, want: Skip, msg: "not a skill"},
		{name: "a harness error is the harness's", calls: []evidence.Call{a2aURLHarness}, want: HarnessError},
	})
}

func TestURL03Table(t *testing.T) {
	product := func(u string) evidence.Call {
		return mcpBody("mcp/get_products/valid", "get_products",
			`{"status":"completed","products":[{"product_id":"p1","preview_url":`+quoteJSON(u)+`}]}`, false, evidence.PurposeValid)
	}
	p := "/result/structuredContent/products/0/preview_url"
	runJudgeTable(t, "URL-03", catalogue.MCP, []judgeCase{
		{name: "a well-formed authority passes", calls: []evidence.Call{product("https://cdn.example.com/p1")}, want: Pass},
		{name: "an IPv6 literal with a port passes", calls: []evidence.Call{product("https://[2001:db8::1]:8443/p1")}, want: Pass},
		{name: "file:/// has an empty authority by design", calls: []evidence.Call{product("file:///tmp/p1")}, want: Pass},
		{name: "userinfo with a host passes (URL-01 judges followed URLs)", calls: []evidence.Call{product("https://u@cdn.example.com/p1")}, want: Pass},
		{name: "an unclosed IPv6 bracket fails", calls: []evidence.Call{product("https://[2001:db8::1/preview")}, want: Fail, ptr: p, msg: "unclosed IPv6 bracket"},
		{name: "userinfo without a host fails", calls: []evidence.Call{product("https://user@/p1")}, want: Fail, ptr: p, msg: "userinfo without a host"},
		{name: "an empty host fails", calls: []evidence.Call{product("https://:443/p1")}, want: Fail, ptr: p, msg: "empty host"},
		{name: "a stray bracket fails", calls: []evidence.Call{product("https://cdn]example.com/p1")}, want: Fail, ptr: p, msg: "stray IPv6 bracket"},
		{name: "a bad URL in the text fallback alone fails", calls: []evidence.Call{mcpResult("mcp/get_products/valid", "get_products",
			`{"content":[{"type":"text","text":`+quoteJSON(`{"status":"completed","products":[{"preview_url":"https://[::1/x"}]}`)+`}]}`, evidence.PurposeValid)},
			want: Fail, ptr: "/result/content/0/text#/products/0/preview_url"},
		{name: "a reply with no URL-shaped string skips", calls: []evidence.Call{urlNoURL}, want: Skip, msg: "no URL observed"},
		{name: "an error probe not run skips with its reason", calls: []evidence.Call{urlNotRun}, want: Skip, msg: "get_products is not listed"},
		{name: "a harness error is the harness's", calls: []evidence.Call{urlHarness}, want: HarnessError},
		{name: "replies left at the run's deadline are a harness error, never a pass", calls: []evidence.Call{product("https://cdn.example.com/p1")},
			opts: stopAfter(Options{}, 0), want: HarnessError, msg: "the run deadline (30s) was hit before this reply was judged"},
		{name: "a malformed URL found before the deadline still fails", calls: []evidence.Call{product("https://user@/p1"),
			mcpBody("mcp/get_products/x_later", "get_products", `{"status":"completed","products":[]}`, false, evidence.PurposeValid)},
			opts: stopAfter(Options{}, 1), want: Fail, ptr: p},
	})
	runJudgeTable(t, "URL-03", catalogue.A2A, []judgeCase{
		{name: "a well-formed FilePart URL passes", calls: []evidence.Call{a2aFile10("https://cdn.example.com/kit.pdf")}, want: Pass},
		{name: "an unclosed bracket in a FilePart fails", calls: []evidence.Call{a2aFile10("https://[2001:db8::1/kit.pdf")},
			want: Fail, ptr: "/result/task/artifacts/0/parts/0/url"},
		{name: "an empty host in a stream event fails", calls: []evidence.Call{a2aStreamURL("https:///oauth")},
			want: Fail, ptr: "/events/0/result/status/message/parts/0/data/challenge_url"},
		{name: "no URL skips", calls: []evidence.Call{a2aResult("a2a/get_products/valid", "get_products", a2aTask("completed", `{"status":"completed","products":[]}`), evidence.PurposeValid)},
			want: Skip, msg: "no URL observed"},
		{name: "a harness error is the harness's", calls: []evidence.Call{a2aURLHarness}, want: HarnessError},
	})
}

// TestURLWalkDoesNotRepeatFileParts: a FilePart's URL is one finding, under
// the FilePart key, not also a plain string.
func TestURLWalkDoesNotRepeatFileParts(t *testing.T) {
	r := parseReply(a2aFile03("http://seller.example.com/kit.pdf"))
	n := 0
	eachString(r, func(p, key, s string) {
		if strings.HasSuffix(p, "/file/uri") {
			n++
			if key != filePartKey {
				t.Errorf("%s has key %q", p, key)
			}
		}
	})
	if n != 1 {
		t.Fatalf("file.uri walked %d times", n)
	}
}

// TestURLShapedIsTheSchemeGrammar: urlShaped takes a string as URL-03 must,
// the RFC 3986 scheme grammar then "://", as the regexp it replaced
// (^[a-zA-Z][a-zA-Z0-9+.-]*://) did, on each edge of that grammar.
func TestURLShapedIsTheSchemeGrammar(t *testing.T) {
	shaped := regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://`)
	for _, v := range []string{
		"https://a", "x://", "H+t.t-p9://a", "z9://", "file:///tmp",
		"", "://a", "1http://a", "+a://", "ht tp://a", "http:/a", "http:", "mailto:a@b", "a:b://c", "é://a",
		"https", "http//a", "urn:isbn:0", strings.Repeat("p", 1<<16), strings.Repeat("p", 1<<16) + "://",
		"ab/://c", "a?b://c",
	} {
		if got, want := urlShaped(v), shaped.MatchString(v); got != want {
			t.Errorf("urlShaped(%.40q) = %v, want %v", v, got, want)
		}
	}
}
