// Package fuzz generates schema-valid AdCP requests for property-based
// fuzzing of a seller: from one release's request schemas (as probes/schemas
// loads and validates them), a seeded stream of values the schema accepts,
// biased to edges — bounds, empty and maximal arrays, optional properties
// present and absent, non-ASCII text, every oneOf branch. The same seed
// and schemas give the same values, byte for byte. It is pure: no network.
//
// Every draft-07 keyword the AdCP request schemas use is generated for:
// $ref, allOf, anyOf, oneOf (exactly one branch: the others are kept as
// negatives), not, if/then/else, const, enum, type unions, properties,
// required, additionalProperties, patternProperties, propertyNames,
// dependencies, min/maxProperties, items (and tuples with
// additionalItems), min/maxItems, uniqueItems, contains, min/maxLength,
// format (date-time, date, time, uri, uri-reference, uri-template, email,
// hostname, uuid, ipv4, ipv6, json-pointer, duration…), pattern (ECMA-262,
// generated from a regexp/syntax tree and matched by the ECMA engine the
// validator uses), minimum, maximum, exclusiveMinimum/Maximum and
// multipleOf. Each value is checked by the project's validator where a
// choice is not correct by construction and always at the root; a value
// that cannot be made valid is an *Error naming the JSON pointer, never
// returned.
//
// A Task carries its tier (Mutating per x-mutates-state or the manifest;
// Referential when it requires an existing resource's id; else
// StatelessRead) and its id fields (Refs), which Options.Pools fill with
// real ids. Shrink reduces a failing value to a minimal one that is still
// valid and still fails.
package fuzz
