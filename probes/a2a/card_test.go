package a2a

import (
	"errors"
	"slices"
	"testing"
)

// TestParseCard: the card shapes of the A2A guide (docs/building/by-layer/L0/
// a2a-guide.mdx, "Sample Agent Card Structure" and "Dual-Advertising for v0.3
// Compatibility") and the 0.3 root-url card, read with exact keys.
func TestParseCard(t *testing.T) {
	const at = "https://s.example/.well-known/agent-card.json"
	for _, c := range []struct {
		name, body                  string
		version, advertised, known  string
		endpoint                    string
		skills                      []string
		err                         error
		anyErr, extension, streamed bool
	}{
		{name: "1.0 card", body: `{"supportedInterfaces":[{"url":"https://s.example/a2a/jsonrpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
			"capabilities":{"streaming":true,"extensions":[{"uri":"https://adcontextprotocol.org/extensions/adcp/v3","required":true}]},
			"skills":[{"id":"get_adcp_capabilities"},{"id":"get_products"}]}`,
			version: V10, advertised: "1.0", known: V10, endpoint: "https://s.example/a2a/jsonrpc",
			skills: []string{"get_adcp_capabilities", "get_products"}, extension: true, streamed: true},
		{name: "a supportedInterfaces entry advertising 0.3 is a 0.3 interface",
			body:    `{"supportedInterfaces":[{"url":"/","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],"skills":[]}`,
			version: V03, advertised: "0.3", known: V03, endpoint: "https://s.example/"},
		{name: "dual advertising: the 1.0 interface is chosen",
			body: `{"supportedInterfaces":[{"url":"https://s.example/","protocolBinding":"JSONRPC","protocolVersion":"0.3"},
				{"url":"https://s.example/a2a/jsonrpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
			version: V10, advertised: "1.0", known: V10, endpoint: "https://s.example/a2a/jsonrpc"},
		{name: "0.3 root card", body: `{"url":"https://s.example/a2a","preferredTransport":"JSONRPC","protocolVersion":"0.3.0","skills":[{"id":"get_products"}]}`,
			version: V03, advertised: "0.3.0", known: V03, endpoint: "https://s.example/a2a", skills: []string{"get_products"}},
		{name: "0.3 card preferring gRPC names its JSON-RPC interface in additionalInterfaces",
			body:    `{"url":"grpc://s.example","preferredTransport":"GRPC","protocolVersion":"0.3.0","additionalInterfaces":[{"url":"https://s.example/rpc","transport":"JSONRPC"}]}`,
			version: V03, advertised: "0.3.0", known: V03, endpoint: "https://s.example/rpc"},
		{name: "an unknown protocolVersion is spoken to but known to no judge",
			body:    `{"url":"https://s.example/a2a","protocolVersion":"0.2.5"}`,
			version: V03, advertised: "0.2.5", known: "", endpoint: "https://s.example/a2a"},
		{name: "URL is not url", body: `{"URL":"https://s.example/a2a","protocolVersion":"0.3.0"}`, anyErr: true},
		{name: "SupportedInterfaces is not supportedInterfaces", body: `{"SupportedInterfaces":[{"url":"https://s.example/a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, anyErr: true},
		{name: "Skills and ID are not skills and id",
			body:    `{"url":"https://s.example/a2a","Skills":[{"id":"get_products"}],"skills":[{"ID":"get_adcp_capabilities"},{"id":7},{"id":"get_products"}]}`,
			version: V03, known: V03, endpoint: "https://s.example/a2a", skills: []string{"get_products"}},
		{name: "only a gRPC interface", body: `{"supportedInterfaces":[{"url":"https://s.example/g","protocolBinding":"GRPC","protocolVersion":"1.0"}]}`, err: ErrNoJSONRPC},
		{name: "Streaming is not streaming", body: `{"url":"https://s.example/a2a","capabilities":{"Streaming":true}}`,
			version: V03, known: V03, endpoint: "https://s.example/a2a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			card, err := ParseCard([]byte(c.body), at)
			switch {
			case c.err != nil || c.anyErr:
				if err == nil || (c.err != nil && !errors.Is(err, c.err)) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if card.Version != c.version || card.Advertised != c.advertised || card.KnownVersion() != c.known || card.Endpoint != c.endpoint {
				t.Errorf("got %+v (known %q)", card, card.KnownVersion())
			}
			if !slices.Equal(card.Skills, c.skills) || card.Extension != c.extension || card.Streaming != c.streamed {
				t.Errorf("got %+v", card)
			}
		})
	}
}

// TestIsResponseMatchesExactKeys: a JSON-RPC response is read with exact
// keys; "ID" and "Result" are not id and result.
func TestIsResponseMatchesExactKeys(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, true},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"x"}}`, true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, true},
		{`{"jsonrpc":"2.0","id":8,"result":{}}`, false},
		{`{"jsonrpc":"2.0","ID":7,"Result":{}}`, false},
		{`{"jsonrpc":"2.0","id":7,"Result":{}}`, false},
	} {
		if got := isResponse([]byte(c.body), []byte("7")); got != c.want {
			t.Errorf("isResponse(%s) = %v", c.body, got)
		}
	}
}
