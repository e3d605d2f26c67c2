package wire

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestExcerpt: an excerpt keeps the head of each body at a UTF-8
// boundary, the first events, and counts what it left out; the exchange it
// was taken from is unchanged.
func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", 10) // 20 bytes, 2 a rune
	x := Exchange{
		RequestBody:  Bytes(`{"q"}`),
		ResponseBody: Bytes(long),
		Events:       []Event{{Data: long}, {Data: "b"}, {Data: "c"}},
	}
	e := x.Excerpt(5, 2)
	if string(e.RequestBody) != `{"q"}` || e.RequestBodyElided != 0 {
		t.Errorf("request body %q elided %d, want it whole", e.RequestBody, e.RequestBodyElided)
	}
	if string(e.ResponseBody) != "éé" || e.ResponseBodyElided != 16 {
		t.Errorf("response body %q elided %d, want %q and 16", e.ResponseBody, e.ResponseBodyElided, "éé")
	}
	if len(e.Events) != 2 || e.EventsElided != 1 || e.Events[0].Data != "éé…" || e.Events[1].Data != "b" {
		t.Errorf("events %+v elided %d, want the first two, the first cut", e.Events, e.EventsElided)
	}
	if string(x.ResponseBody) != long || x.Events[0].Data != long || len(x.Events) != 3 {
		t.Errorf("the original changed: %+v", x)
	}

	bin := Bytes{0xff, 0xfe, 0xfd, 0xfc}
	if got, n := headOf(bin, 3); !bytes.Equal(got, bin[:3]) || n != 1 {
		t.Errorf("binary body: %x, %d; want the first 3 bytes, 1 elided", got, n)
	}
	if got, _ := headOf(Bytes(long), 3); !utf8.Valid(got) {
		t.Errorf("a cut UTF-8 body is not valid UTF-8: %x", got)
	}
}
