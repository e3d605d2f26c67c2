package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
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

// flipCase returns s with the ASCII letters whose bit is set in mask
// (cycling over 32 bits) in the other case.
func flipCase(s string, mask uint32) string {
	b := []byte(s)
	for i, c := range b {
		if mask&(1<<(uint(i)%32)) == 0 {
			continue
		}
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 32
		case c >= 'A' && c <= 'Z':
			b[i] = c + 32
		}
	}
	return string(b)
}

// insertAt returns data with s inserted at at (modulo its length).
func insertAt(data []byte, s string, at uint16) []byte {
	i := int(at) % (len(data) + 1)
	return append(append(append([]byte(nil), data[:i]...), s...), data[i:]...)
}

// FuzzSSEFieldsRedacted feeds a stream holding a secret, in any letter
// case, at any place (an id or event line, data, a comment) to a recording
// exchange: no stored event keeps the secret in its ID, Type, Data or Raw,
// and the ID and Type are bounded whatever the stream.
func FuzzSSEFieldsRedacted(f *testing.F) {
	const secret = "S3cretTok-9f2a"
	f.Add([]byte("id: \nevent: \ndata: {}\n\n"), uint16(4), uint32(0), uint8(3))
	f.Add([]byte("event: \ndata: x\n\n"), uint16(7), uint32(0xffffffff), uint8(1))
	f.Add([]byte("id: "+strings.Repeat("I", 600)+"\ndata:\n\ndata:\n\n"), uint16(4), uint32(0x5555), uint8(9))
	f.Add([]byte("data: {\"a\":\"\"}\n\n"), uint16(12), uint32(3), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, at uint16, mask uint32, chunk uint8) {
		in := insertAt(data, flipCase(secret, mask), at)
		rec := newRecord(NewRedactor([]string{secret}, nil), time.Now, time.Now(), nil)
		d := newSSEDecoder(1<<16, func(ev Event) error { rec.addEvent(ev); return nil })
		for p := in; len(p) > 0; {
			k := min(int(chunk)%13+1, len(p))
			if d.feed(p[:k]) != nil {
				break
			}
			p = p[k:]
		}
		_ = d.finish()
		low := strings.ToLower(secret)
		for _, ev := range rec.snapshot().Events {
			for name, v := range map[string]string{"id": ev.ID, "event": ev.Type, "data": ev.Data, "raw": string(ev.Raw)} {
				if strings.Contains(strings.ToLower(v), low) {
					t.Fatalf("the %s keeps the secret: %q (stream %q)", name, v, in)
				}
			}
			if len(ev.ID) > MaxEventFieldBytes+32 || len(ev.Type) > MaxEventFieldBytes+32 {
				t.Fatalf("id %d bytes, event %d bytes: over the bound", len(ev.ID), len(ev.Type))
			}
		}
	})
}

// FuzzHeaderRedaction gives Redactor.Header names and values holding a
// secret in any letter case: no output name or value keeps it, credential
// names keep no value, and the output is no larger than the input plus the
// redaction marks.
func FuzzHeaderRedaction(f *testing.F) {
	const secret = "S3cretTok-9f2a"
	f.Add("X-Echo-", "1", uint16(7), uint16(0), uint32(0), true, false)
	f.Add("X-Api-Key", "", uint16(0), uint16(0), uint32(0xffff), false, true)
	f.Add("X-Token-", "Bearer ", uint16(8), uint16(7), uint32(0xaaaa), true, true)
	f.Add("\xffx-\xc3", "v", uint16(2), uint16(0), uint32(1), true, false)
	f.Fuzz(func(t *testing.T, name, value string, atName, atValue uint16, mask uint32, inName, inValue bool) {
		if inName {
			name = string(insertAt([]byte(name), flipCase(secret, mask), atName))
		}
		if inValue {
			value = string(insertAt([]byte(value), flipCase(secret, mask>>7), atValue))
		}
		h := http.Header{name: {value, value}, "Other": {value}}
		out, _ := NewRedactor([]string{secret}, nil).Header(h)
		low := strings.ToLower(secret)
		size, inSize := 0, 0
		for n, vs := range h {
			inSize += len(n) + 2*len(Redacted)
			for _, v := range vs {
				inSize += len(v) + 2*len(Redacted)
			}
		}
		for n, vs := range out {
			if strings.Contains(strings.ToLower(n), low) {
				t.Fatalf("a name keeps the secret: %q", n)
			}
			size += len(n)
			for _, v := range vs {
				size += len(v)
				if strings.Contains(strings.ToLower(v), low) {
					t.Fatalf("%q keeps the secret: %q", n, v)
				}
				if SensitiveHeader(n) && v != Redacted {
					t.Fatalf("credential header %q keeps %q", n, v)
				}
			}
		}
		if size > inSize {
			t.Fatalf("output %d bytes for %d", size, inSize)
		}
	})
}
