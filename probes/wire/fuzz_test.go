package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func eventsOf(data []byte, chunk, max int) ([]Event, error) {
	var evs []Event
	d := newSSEDecoder(max, func(ev Event) error { evs = append(evs, ev); return nil })
	for len(data) > 0 {
		k := min(chunk, len(data))
		if err := d.feed(data[:k]); err != nil {
			return evs, err
		}
		data = data[k:]
	}
	return evs, d.finish()
}

func describe(evs []Event) string {
	var b bytes.Buffer
	for _, e := range evs {
		fmt.Fprintf(&b, "%q|%q|%q|%v|%v|%v|%q\n", e.Type, e.Data, e.ID, e.HasID, e.Dispatch, e.Complete, e.Raw)
	}
	return b.String()
}

// FuzzSSE checks that the parser never panics, keeps every event within the
// limit, and gives the same events whatever the chunking.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("event: message\ndata: {\"a\":1}\n\n"), uint8(1))
	f.Add([]byte("\xEF\xBB\xBFdata:x\r\ndata: y\r\r: c\nid: 1\nretry: 10\n\ndata: cut"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		const max = 128
		whole, werr := eventsOf(data, len(data)+1, max)
		parts, perr := eventsOf(data, int(chunk)%17+1, max)
		var le *LimitError
		if (werr == nil) != (perr == nil) || (werr != nil && !errors.As(werr, &le)) {
			t.Fatalf("errors differ or are not limit errors: whole %v, chunked %v", werr, perr)
		}
		if werr == nil && describe(whole) != describe(parts) {
			t.Fatalf("chunking changes events:\nwhole\n%s\nchunked\n%s", describe(whole), describe(parts))
		}
		for _, e := range append(whole, parts...) {
			if len(e.Raw) > max || len(e.Data) > 3*max {
				t.Fatalf("event over the limit: raw %d data %d", len(e.Raw), len(e.Data))
			}
			if !bytes.Contains(data, e.Raw) {
				t.Fatalf("raw %q is not in the input", e.Raw)
			}
		}
	})
}

// FuzzRedactJSON checks that redaction never panics, stays bounded, keeps
// valid JSON valid, and never lets a configured secret through.
func FuzzRedactJSON(f *testing.F) {
	f.Add([]byte(`{"token":"x","a":[{"Api-Key":1}],"m":"S3cretTok"}`))
	f.Add([]byte(`{"password":{"a":"}"},"b":"\u0053\u0033cretTok"}`))
	f.Add([]byte("Client-Secret"))
	f.Add([]byte("\u212aey"))
	f.Fuzz(func(t *testing.T, in []byte) {
		const secret = "S3cretTok"
		if k := string(in); (minimumKey.MatchString(k) || extendedKey.MatchString(k)) != SensitiveKey(k) {
			t.Fatalf("SensitiveKey(%q) = %v disagrees with the patterns", k, SensitiveKey(k))
		}
		out := RedactJSON(in)
		if len(out) > 4*len(in)+64 {
			t.Fatalf("output %d bytes for input %d", len(out), len(in))
		}
		valid := json.Valid(in)
		if valid && !json.Valid(out) {
			t.Fatalf("valid input, invalid output:\n in %q\nout %q", in, out)
		}
		r := NewRedactor([]string{secret}, nil)
		for _, cut := range []bool{false, true} {
			out, _ := r.Body(in, cut)
			if len(out) > 4*len(in)+64 {
				t.Fatalf("output %d bytes for input %d", len(out), len(in))
			}
			if bytes.Contains(out, []byte(secret)) {
				t.Fatalf("secret kept: %q -> %q", in, out)
			}
			if valid && !cut && !json.Valid(out) {
				t.Fatalf("valid input, invalid output with a secret:\n in %q\nout %q", in, out)
			}
			if valid && !cut {
				var v any
				json.Unmarshal(out, &v)
				if s, _ := json.Marshal(v); bytes.Contains(s, []byte(secret)) {
					t.Fatalf("secret kept after decoding: %q", out)
				}
			}
		}
	})
}
