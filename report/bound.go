package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// MaxEmbeddedBytes bounds each payload, body and event results.json
// embeds: a reply cited by several rules and a step would otherwise be
// copied whole into each. evidence.json keeps every recorded call whole,
// once, and results.json holds its hash (integrity.calls).
const MaxEmbeddedBytes = 64 << 10

// ElidedKey names the object that stands in results.json for a payload it
// does not embed as it is (see Embed).
const ElidedKey = "adcp_conform_elided"

// Elided is what stands for a payload a report does not embed as it is:
// its size and SHA-256, its first MaxEmbeddedBytes as text, and why.
type Elided struct {
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
	// Depth is the payload's nesting, set when it is deeper than
	// wire.MaxJSONDepth.
	Depth int `json:"depth,omitempty"`
	// Note says why the payload is not embedded as JSON.
	Note string `json:"note"`
	// Excerpt is the payload's first MaxEmbeddedBytes, as text.
	Excerpt string `json:"excerpt"`
	// ExcerptElided counts the bytes the excerpt leaves out.
	ExcerptElided int    `json:"excerpt_elided,omitempty"`
	WholeIn       string `json:"whole_in"`
}

// Embed returns a payload as a report embeds it: as it is when it is one
// JSON text of at most MaxEmbeddedBytes nested at most wire.MaxJSONDepth
// levels; otherwise {"adcp_conform_elided": Elided}, its first 64 KiB kept
// as escaped text. A nil payload stays nil.
func Embed(payload json.RawMessage) json.RawMessage {
	if payload == nil {
		return nil
	}
	why, depth := unembeddable(payload)
	if why == "" {
		return payload
	}
	sum := sha256.Sum256(payload)
	e := Elided{Bytes: len(payload), SHA256: hex.EncodeToString(sum[:]), Depth: depth, Note: why, WholeIn: "evidence.json"}
	head, left := headOf(payload, MaxEmbeddedBytes)
	e.Excerpt, e.ExcerptElided = string(head), left
	b, err := json.Marshal(map[string]Elided{ElidedKey: e})
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// EmbedValue is Embed of v's JSON encoding; null when encoding/json
// cannot write v.
func EmbedValue(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return Embed(b)
}

// unembeddable says why a report does not embed raw as JSON ("" when it
// does) and, for a value nested too deep, its depth.
func unembeddable(raw []byte) (why string, depth int) {
	if len(raw) > MaxEmbeddedBytes { // never read further: it is not embedded whatever it holds
		return fmt.Sprintf("over the %d bytes a report embeds: its first %d kept as text", MaxEmbeddedBytes, MaxEmbeddedBytes), 0
	}
	depth, ok := rawjson.Depth(raw)
	switch {
	case ok && depth > wire.MaxJSONDepth: // before json.Valid, which refuses past 10 000 levels
		return fmt.Sprintf("nested %d levels deep, beyond the %d a report writes as JSON: kept as text", depth, wire.MaxJSONDepth), depth
	case !ok || !json.Valid(raw):
		return "not one JSON text: kept as text", 0
	}
	return "", 0
}

// headOf is b's first n bytes, cut at a UTF-8 boundary, and the bytes it
// leaves out.
func headOf(b []byte, n int) ([]byte, int) {
	if len(b) <= n {
		return b, 0
	}
	i := n
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return b[:i], len(b) - i
}

// tooDeep is the note a writer shows in place of pretty-printed JSON for a
// value nested deeper than wire.MaxJSONDepth (its text is shown as it is);
// "" for any other value.
func tooDeep(raw []byte) string {
	if d, ok := rawjson.Depth(raw); ok && d > wire.MaxJSONDepth {
		return fmt.Sprintf("(nested %d levels deep, beyond the %d a report lays out: shown as text) ", d, wire.MaxJSONDepth)
	}
	return ""
}

// indentBounded pretty-prints raw JSON nested at most wire.MaxJSONDepth
// levels; anything else is its text, a deep value's behind the note.
func indentBounded(raw []byte) string {
	if note := tooDeep(raw); note != "" {
		return note + string(raw)
	}
	var out bytes.Buffer
	if json.Indent(&out, raw, "", "  ") == nil {
		return out.String()
	}
	return string(raw)
}
