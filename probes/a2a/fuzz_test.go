package a2a

import (
	"reflect"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// FuzzParseCard checks that any card and card URL are read without a
// panic, deterministically, and that a card accepted has a version the
// client speaks, an endpoint, and no more skills than the card lists.
func FuzzParseCard(f *testing.F) {
	f.Add([]byte(`{"supportedInterfaces":[{"url":"/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"skills":[{"id":"get_products"}]}`),
		"https://seller.example/.well-known/agent-card.json")
	f.Add([]byte(`{"url":"https://seller.example/a2a","protocolVersion":"0.3.0"}`), "")
	f.Add([]byte(`{"supportedInterfaces":[]}`), "%zz")
	f.Add([]byte(`[1,2]`), "https://x")
	f.Add([]byte(`{"URL":"https://s.example","Skills":[{"ID":"x"}],"skills":[{"id":"y"}],"SKILLS":[]}`), "https://x")
	f.Fuzz(func(t *testing.T, body []byte, cardURL string) {
		c, err := ParseCard(body, cardURL)
		again, err2 := ParseCard(body, cardURL)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(c, again) {
			t.Fatalf("not deterministic: %+v %v / %+v %v", c, err, again, err2)
		}
		if err != nil {
			if !reflect.DeepEqual(c, Card{}) {
				t.Fatalf("an error with a card: %+v", c)
			}
			return
		}
		if c.Version != V03 && c.Version != V10 {
			t.Fatalf("version %q", c.Version)
		}
		if c.Endpoint == "" {
			t.Fatal("a card accepted without an endpoint")
		}
		root, _ := rawjson.ParseObject(body)
		listed, _ := objects(root, "skills")
		if len(c.Skills) > len(listed) {
			t.Fatalf("%d skills from %d listed", len(c.Skills), len(listed))
		}
	})
}
