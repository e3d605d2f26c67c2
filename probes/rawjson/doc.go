// Package rawjson reads JSON as a client's JSON.parse does, from the raw
// bytes a seller sent: the one JSON foundation the wire layer, the
// extractors, the judges and the storyboard engine stand on.
//
//	o, err := rawjson.ParseObject(body)       // a strict view: members in order, duplicates noted
//	v, ok := o.Get("structuredContent")       // exact-case lookup; the last of duplicate keys wins
//	ok = rawjson.Valid(body)                  // JSON.parse's grammar, at any depth
//	err = rawjson.Decode(body, &reply)        // exact-case struct decoding
//	p := rawjson.Pointer("/result", "a/b")    // "/result/a~1b", RFC 6901
//
// # Strict decoding
//
// The package follows JSON.parse's grammar, is case-sensitive, tells an
// absent key from null, false and "", and resolves duplicate keys as
// JSON.parse does (the last one wins) while recording them. It never
// recurses over input (100 000 levels of nesting are accepted, as V8
// accepts them; encoding/json stops at 10 000) and allocates in proportion
// to the members it reads. Invalid UTF-8 and lone surrogate escapes are
// read as U+FFFD (what a JavaScript client sees after TextDecoder) and
// recorded (Irregular). JavaScript truthiness (Truthy) and JSON.stringify
// lengths (StringifyLen, StringifyUnits) are measured as the reference
// code measures them.
//
// # Checked and validated inputs
//
// Most functions check their input and refuse what is not one JSON text.
// A few read a value cut from a text already checked (an Object member, an
// element) without checking it again, so a reader walking one reply reads
// it once: ObjectOf, Elements, SoleKey, DecodeString, UTF16Len and
// TruthyValue. Each says so; Scan and Trim prepare their input.
//
// # Pointers
//
// Pointer, Tokens, EscapeToken, UnescapeToken, Index and Resolve are the
// harness's one RFC 6901 JSON pointer.
package rawjson
