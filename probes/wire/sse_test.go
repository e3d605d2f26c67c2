package wire

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll parses stream, delivered in chunks of size n (0 = whole).
func readAll(stream string, n, max int) ([]Event, error) {
	var r io.Reader = strings.NewReader(stream)
	if n > 0 {
		r = &chunkReader{s: stream, n: n}
	}
	sr := NewSSEReader(r, max)
	var out []Event
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := min(c.n, len(p), len(c.s))
	copy(p, c.s[:k])
	c.s = c.s[k:]
	return k, nil
}

func TestSSEParserWHATWG(t *testing.T) {
	type want struct {
		typ, data, id string
		dispatch      bool
		retry         int64 // -1 absent
	}
	for _, tc := range []struct {
		name   string
		stream string
		want   []want
	}{
		{"space after colon is optional", "data:a\ndata: b\ndata:  c\n\n", []want{{"", "a\nb\n c", "", true, -1}}},
		{"CR, LF and CRLF", "data: 1\rdata: 2\r\ndata: 3\n\r\n", []want{{"", "1\n2\n3", "", true, -1}}},
		{"BOM stripped once", "\xEF\xBB\xBFdata: x\n\n\xEF\xBB\xBFdata: y\n\n", []want{{"", "x", "", true, -1}, {"", "", "", false, -1}}},
		{"comments ignored", ": hello\ndata: x\n: mid\n\n", []want{{"", "x", "", true, -1}}},
		{"event, id persist, retry", "event: message\nid: 7\nretry: 1500\ndata: {}\n\ndata: again\n\n",
			[]want{{"message", "{}", "7", true, 1500}, {"", "again", "7", true, -1}}},
		{"empty id resets", "id: 7\ndata: a\n\nid\ndata: b\n\n", []want{{"", "a", "7", true, -1}, {"", "b", "", true, -1}}},
		{"id with NUL ignored", "id: 1\x002\ndata: a\n\n", []want{{"", "a", "", true, -1}}},
		{"bad retry ignored", "retry: 1x\ndata: a\n\n", []want{{"", "a", "", true, -1}}},
		{"field without colon", "data\n\n", []want{{"", "", "", true, -1}}},
		{"no data: not dispatched", "event: x\nid: 3\n\n", []want{{"x", "", "3", false, -1}}},
		{"unknown field", "foo: bar\n\n", []want{{"", "", "", false, -1}}},
		{"cut at EOF", "data: a\n\ndata: b", []want{{"", "a", "", true, -1}, {"", "b", "", false, -1}}},
		{"invalid UTF-8 replaced", "data: \xff\n\n", []want{{"", "\uFFFD", "", true, -1}}},
		{"field names are case-sensitive", "Data: x\n\n", []want{{"", "", "", false, -1}}},
	} {
		for _, chunk := range []int{0, 1, 2, 3} {
			got, err := readAll(tc.stream, chunk, 0)
			if err != nil {
				t.Errorf("%s/%d: %v", tc.name, chunk, err)
				continue
			}
			if len(got) != len(tc.want) {
				t.Errorf("%s/%d: %d events %+v, want %d", tc.name, chunk, len(got), got, len(tc.want))
				continue
			}
			raw := ""
			for i, w := range tc.want {
				g := got[i]
				r := int64(-1)
				if g.Retry != nil {
					r = *g.Retry
				}
				if g.Type != w.typ || g.Data != w.data || g.ID != w.id || g.Dispatch != w.dispatch || r != w.retry {
					t.Errorf("%s/%d: event %d = %+v, want %+v", tc.name, chunk, i, g, w)
				}
				raw += string(g.Raw)
			}
			if !strings.HasSuffix(tc.stream, raw) {
				t.Errorf("%s/%d: raw bytes %q are not the stream's", tc.name, chunk, raw)
			}
		}
	}
}

func TestSSEParserLimit(t *testing.T) {
	_, err := readAll("data: "+strings.Repeat("a", 100)+"\n\n", 7, 64)
	var le *LimitError
	if !errors.As(err, &le) || le.What != "sse event" || le.Limit != 64 {
		t.Fatalf("err = %v, want an sse event *LimitError", err)
	}
	// Many small events are fine under a small per-event limit.
	got, err := readAll(strings.Repeat("data: abc\n\n", 1000), 5, 16)
	if err != nil || len(got) != 1000 {
		t.Fatalf("%d events, %v", len(got), err)
	}
}

func TestSSEReaderPropagatesReadErrors(t *testing.T) {
	boom := errors.New("boom")
	sr := NewSSEReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), 0)
	ev, err := sr.Next()
	if err != nil || ev.Data != "a" {
		t.Fatalf("first event %+v, %v", ev, err)
	}
	if _, err := sr.Next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the reader's error", err)
	}
}
