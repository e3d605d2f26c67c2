package evidence

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"unicode/utf8"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// WriteJSON writes the store as evidence.json, one call at a time: the
// whole document, which holds every kept reply about three times (the
// exchange's body, the message, the result), is never in memory at once.
func (s *Store) WriteJSON(w io.Writer) error {
	_, err := s.WriteJSONUntil(w, nil)
	return err
}

// Written is a call WriteJSONUntil wrote: its probe ID and the SHA-256 of
// its bytes in the file, from its opening brace to its closing one (the
// hash report/certify gives a call of evidence.json).
type Written struct {
	ProbeID string
	SHA256  string
}

// WriteJSONUntil is WriteJSON that asks stop (nil: never) before each call
// whether to go on: once it gives a reason, the calls left are not
// written, and the document's "omitted" member counts them and gives the
// reason. It returns the calls written, in order, with their hashes taken
// as they were written (sealing the file need not read it again).
//
// The document is the one MarshalJSON writes, indented, but the seller's
// bytes are never encoded again: a raw member (the message, the result…)
// that is UTF-8 JSON within wire.MaxJSONDepth is copied as it was
// received, one that is not is wrapped (see pack), and a body is escaped
// straight into the file. Each call's raw members and exchanges come
// after its other members. Writing 8 MiB replies went from about 13 MB/s
// (an indenting encoder that validated, compacted and re-indented each
// reply three times over) to the speed of a copy.
func (s *Store) WriteJSONUntil(w io.Writer, stop func() string) ([]Written, error) {
	target, err := json.MarshalIndent(s.target, "  ", "  ")
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	fmt.Fprintf(bw, "{\n  \"target\": %s,\n  \"calls\": [", target)
	all := s.Calls()
	var written []Written
	call := &hashing{w: bw, h: sha256.New()}
	for i, c := range all {
		if stop != nil && stop() != "" {
			break
		}
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    ")
		call.h.Reset()
		if err := writeCall(call, c); err != nil {
			return written, err
		}
		written = append(written, Written{ProbeID: c.ProbeID, SHA256: hex.EncodeToString(call.h.Sum(nil))})
	}
	if len(written) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]")
	if left := len(all) - len(written); left > 0 {
		om, _ := json.Marshal(Omitted{Calls: left, Reason: stop()})
		fmt.Fprintf(bw, ",\n  \"omitted\": %s", om)
	}
	bw.WriteString("\n}\n")
	return written, bw.Flush()
}

// output is where a call is written.
type output interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
}

// hashing writes to w and hashes what it writes.
type hashing struct {
	w   *bufio.Writer
	h   hash.Hash
	one [1]byte
}

func (t *hashing) Write(p []byte) (int, error) {
	t.h.Write(p)
	return t.w.Write(p)
}

func (t *hashing) WriteString(s string) (int, error) {
	io.WriteString(t.h, s)
	return t.w.WriteString(s)
}

func (t *hashing) WriteByte(c byte) error {
	t.one[0] = c
	_, err := t.Write(t.one[:])
	return err
}

// The indentation of a call's members and of an exchange's in
// evidence.json.
const (
	callIndent     = "    "
	exchangeIndent = "        "
)

// writeCall writes one call at callIndent: its small members indented by
// encoding/json, then its raw members and exchanges.
func writeCall(w output, c Call) error {
	small := c
	for _, m := range rawMembers(&small) {
		*m.v = nil
	}
	small.Exchanges = nil
	if err := openObject(w, small, callIndent); err != nil {
		return err
	}
	for _, m := range rawMembers(&c) {
		if len(*m.v) == 0 {
			continue // omitempty
		}
		member(w, callIndent, m.name)
		if verbatim(*m.v) {
			w.Write(*m.v)
		} else {
			w.WriteString(`{"` + packedKey + `": `)
			writeBytes(w, *m.v)
			w.WriteString("}")
		}
	}
	if len(c.Exchanges) > 0 {
		member(w, callIndent, "exchanges")
		w.WriteString("[")
		for i, x := range c.Exchanges {
			if i > 0 {
				w.WriteString(",")
			}
			w.WriteString("\n" + callIndent + "    ")
			if err := writeExchange(w, x); err != nil {
				return err
			}
		}
		w.WriteString("\n" + callIndent + "  ]")
	}
	_, err := w.WriteString("\n" + callIndent + "}")
	return err
}

// writeExchange writes one exchange at exchangeIndent, its bodies escaped
// straight into w and its events encoded without indentation.
func writeExchange(w output, x wire.Exchange) error {
	small := x
	small.RequestBody, small.ResponseBody, small.Events = nil, nil, nil
	if err := openObject(w, small, exchangeIndent); err != nil {
		return err
	}
	for _, b := range []struct {
		name string
		v    wire.Bytes
	}{{"request_body", x.RequestBody}, {"response_body", x.ResponseBody}} {
		if len(b.v) > 0 {
			member(w, exchangeIndent, b.name)
			writeBytes(w, b.v)
		}
	}
	if len(x.Events) > 0 {
		ev, err := json.Marshal(x.Events)
		if err != nil {
			return err
		}
		member(w, exchangeIndent, "events")
		w.Write(ev)
	}
	_, err := w.WriteString("\n" + exchangeIndent + "}")
	return err
}

// openObject writes v (a struct with at least one member always written)
// indented at indent, without its closing brace and the line before it.
func openObject(w output, v any, indent string) error {
	b, err := json.MarshalIndent(v, indent, "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(b[:len(b)-len("\n"+indent+"}")])
	return err
}

// member starts the next member, name, of an object opened by openObject.
func member(w output, indent, name string) {
	w.WriteString(",\n" + indent + `  "` + name + `": `)
}

// writeBytes writes b as wire.Bytes encodes it: a JSON string when b is
// UTF-8, else {"base64": "…"}, in one pass over b.
func writeBytes(w output, b []byte) {
	if !utf8.Valid(b) {
		w.WriteString(`{"base64":"`)
		enc := base64.NewEncoder(base64.StdEncoding, w)
		enc.Write(b)
		enc.Close()
		w.WriteString(`"}`)
		return
	}
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		w.Write(b[start:i])
		w.WriteString(escapes[c])
		start = i + 1
	}
	w.Write(b[start:])
	w.WriteByte('"')
}

// escapes are the JSON escapes of the bytes a string cannot hold as they
// are: the control characters, the quote and the backslash.
var escapes = func() (e [256]string) {
	const hex = "0123456789abcdef"
	for c := range 0x20 {
		e[c] = `\u00` + string(hex[c>>4]) + string(hex[c&0xF])
	}
	e['"'], e['\\'], e['\n'], e['\r'], e['\t'] = `\"`, `\\`, `\n`, `\r`, `\t`
	return e
}()
