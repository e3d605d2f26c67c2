package certify

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
)

// maxNesting bounds how deep Redact looks into strings holding JSON.
const maxNesting = 4

// Contract applies the runner output contract's security rules to a run
// before it is written, whatever the probes already did: request and
// response payloads (and a failed validation's actual value) are redacted
// at every key the contract's pattern matches — also inside strings that
// hold JSON, such as an MCP text item — response headers pass the
// allowlist, request headers are dropped, and a skip reason (of a step or
// a storyboard) outside the contract's vocabulary becomes not_applicable
// with the original reason in its detail.
func Contract(run *report.Run) {
	for i := range run.Steps {
		st := &run.Steps[i]
		if st.Request != nil {
			st.Request.Payload = Redact(st.Request.Payload)
		}
		if st.Response != nil {
			st.Response.Payload = Redact(st.Response.Payload)
			if len(st.Response.Headers) > 0 {
				st.Response.Headers = wire.ReportResponseHeaders(http.Header(st.Response.Headers))
			}
			if len(st.Response.Headers) == 0 {
				st.Response.Headers = nil
			}
		}
		for j := range st.Validations {
			st.Validations[j].Actual = Redact(st.Validations[j].Actual)
		}
		if st.Skip != nil && !slices.Contains(report.SkipReasons, st.Skip.Reason) {
			st.Skip.Detail = strings.TrimSpace(st.Skip.Reason + ": " + st.Skip.Detail)
			st.Skip.Reason = "not_applicable"
		}
	}
	for i := range run.Storyboards {
		if sk := run.Storyboards[i].Skip; sk != nil && !slices.Contains(report.SkipReasons, sk.Reason) {
			sk.Detail = strings.TrimSpace(sk.Reason + ": " + sk.Detail)
			sk.Reason = "not_applicable"
		}
	}
	for i := range run.Rules {
		for j := range run.Rules[i].Evidence {
			ex := run.Rules[i].Evidence[j].Exchanges
			for k := range ex {
				ex[k].RequestHeaders = nil
				if h := wire.ReportResponseHeaders(ex[k].ResponseHeaders); len(h) > 0 {
					ex[k].ResponseHeaders = h
				} else {
					ex[k].ResponseHeaders = nil
				}
			}
		}
	}
}

// Redact returns raw with the value of every key matching the contract's
// payload_redaction pattern (wire.SensitiveKey, which extends it) replaced
// by "[redacted]" at any depth, also inside string values that hold a JSON
// object or array. Key order is kept; insignificant whitespace is not.
// Invalid JSON is redacted on a best-effort basis by wire.RedactJSON.
func Redact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	out, _, err := redact(raw, 0)
	if err != nil {
		return wire.RedactJSON(raw)
	}
	return out
}

// redact re-encodes the JSON value raw with sensitive values replaced, and
// returns how many it replaced.
func redact(raw []byte, depth int) ([]byte, int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var buf bytes.Buffer
	hits := 0
	if err := redactValue(dec, &buf, depth, &hits); err != nil {
		return nil, 0, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, 0, errors.New("trailing data after the JSON value")
	}
	return buf.Bytes(), hits, nil
}

func writeJSON(buf *bytes.Buffer, v any) {
	b, _ := json.Marshal(v) // strings and numbers never fail
	buf.Write(b)
}

func redactValue(dec *json.Decoder, buf *bytes.Buffer, depth int, hits *int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		obj := t == '{'
		buf.WriteString(t.String())
		for n := 0; dec.More(); n++ {
			if n > 0 {
				buf.WriteByte(',')
			}
			if obj {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				writeJSON(buf, key)
				buf.WriteByte(':')
				if wire.SensitiveKey(key) {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return err
					}
					writeJSON(buf, wire.Redacted)
					*hits++
					continue
				}
			}
			if err := redactValue(dec, buf, depth, hits); err != nil {
				return err
			}
		}
		end, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := end.(json.Delim)
		if !ok {
			return errors.New("unbalanced JSON")
		}
		buf.WriteString(d.String())
	case string:
		s := strings.TrimSpace(t)
		if depth < maxNesting && (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")) && json.Valid([]byte(s)) {
			if inner, n, err := redact([]byte(s), depth+1); err == nil && n > 0 {
				*hits += n
				writeJSON(buf, string(inner))
				return nil
			}
		}
		writeJSON(buf, t)
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		writeJSON(buf, t)
	case nil:
		buf.WriteString("null")
	}
	return nil
}
