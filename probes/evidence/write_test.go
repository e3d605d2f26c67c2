package evidence

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// WriteJSON writes, call by call, the document MarshalJSON writes (the
// same JSON value), with each raw member that is UTF-8 JSON within the
// depth bound copied byte for byte, each body escaped as encoding/json
// escapes a string or in base64 when not UTF-8, and every value read back
// as it was recorded.
func TestWriteJSONIsTheDocumentWithTheSellersBytesAsReceived(t *testing.T) {
	msg := `{"jsonrpc":"2.0", "id":1,"result":{"a":[1, 2],"html":"<b>&</b>","s":"\u00e9\n"}}`
	body := "{\"q\":\"\\\"\t\u0001\x7f\u2028é\"}\n"
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	full := NewStore(Target{MCP: "http://127.0.0.1:1/mcp", Credential: true})
	full.Add(Call{ProbeID: "b", Transport: MCP, Kind: KindToolCall, Tool: "get_products", Arguments: json.RawMessage(`{"brief":"x"}`),
		Message: json.RawMessage(msg), Result: json.RawMessage(msg[34 : len(msg)-1]), HTTPStatus: 200,
		Exchanges: []wire.Exchange{
			{Seq: 1, Method: "POST", RequestBody: wire.Bytes(`{"id":1}`), ResponseBody: wire.Bytes(body), Status: 200,
				Events: []wire.Event{{Data: "d\"<", Raw: wire.Bytes("data: d\n\n")}}},
			{Seq: 2, Method: "GET", ResponseBody: wire.Bytes("\xff\xfe not UTF-8")},
		}})
	full.Add(Call{ProbeID: "a", Transport: MCP, HarnessError: "x"})
	full.Add(Call{ProbeID: "c", Transport: MCP, Kind: KindToolCall, Message: json.RawMessage(deep), Body: json.RawMessage("{\"a\":\"\xff\"}")})
	for name, s := range map[string]*Store{"empty": NewStore(Target{}), "full": full} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := s.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		var wantV, gotV any
		if err := json.Unmarshal(want, &wantV); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got.Bytes(), &gotV); err != nil {
			t.Fatalf("%s: WriteJSON wrote no JSON: %v\n%s", name, err, got.String())
		}
		if !reflect.DeepEqual(gotV, wantV) {
			t.Errorf("%s: WriteJSON and MarshalJSON differ:\n got %s\nwant %s", name, got.String(), want)
		}
		if !utf8.Valid(got.Bytes()) {
			t.Errorf("%s: evidence.json is not UTF-8", name)
		}
		back := NewStore(Target{})
		if err := back.UnmarshalJSON(got.Bytes()); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Calls(), s.Calls()) {
			t.Errorf("%s: read back %+v\nwant %+v", name, back.Calls(), s.Calls())
		}
	}
	var got bytes.Buffer
	if err := full.WriteJSON(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got.Bytes(), []byte(`"message": `+msg)) {
		t.Errorf("the message is not copied as received:\n%s", got.String())
	}
}

// WriteJSONUntil stops writing calls once stop gives a reason: the file
// is still one JSON document, loads, holds the calls written, and counts
// the ones it left out with the reason.
func TestWriteJSONUntilNamesTheCallsItLeftOut(t *testing.T) {
	s := NewStore(Target{})
	for _, id := range []string{"a", "b", "c"} {
		s.Add(Call{ProbeID: id, Transport: MCP, HarnessError: "x"})
	}
	asked := 0
	var b bytes.Buffer
	written, err := s.WriteJSONUntil(&b, func() string {
		if asked++; asked > 1 {
			return "interrupted by SIGINT"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Calls   []Call   `json:"calls"`
		Omitted *Omitted `json:"omitted"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(written) != 1 || written[0].ProbeID != "a" || len(doc.Calls) != 1 {
		t.Errorf("written %v, %d calls in the file", written, len(doc.Calls))
	}
	if doc.Omitted == nil || doc.Omitted.Calls != 2 || doc.Omitted.Reason != "interrupted by SIGINT" {
		t.Errorf("omitted %+v", doc.Omitted)
	}
	var back Store
	if err := back.UnmarshalJSON(b.Bytes()); err != nil || len(back.Calls()) != 1 {
		t.Errorf("read back: %v, %d calls", err, len(back.Calls()))
	}
}
