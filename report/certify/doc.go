// Package certify makes a report folder something a registry can check
// without running the harness: it hashes every piece of evidence into
// results.json, signs results.json with Ed25519 over its RFC 8785 canonical
// form, and verifies both. It also holds what a run does to a report before
// it is written — the contract's redaction pass, the baseline, the
// certification marks — and the diff of two runs.
//
//	pub, priv, _ := certify.GenerateKey()
//	run.Integrity, _ = certify.Seal(dir, []string{"evidence.json", "junit.xml", "report.html"}, probeIDs)
//	sig, _ := certify.Sign(priv, resultsJSON)
//	err := certify.VerifyDir(dir, pub) // signature, then every hash
//
// # Formats
//
// Keys are PEM: PREFIX.key holds a PKCS #8 "PRIVATE KEY" block (mode 0600),
// PREFIX.pub a PKIX "PUBLIC KEY" block, the forms `openssl genpkey
// -algorithm ed25519` and `openssl pkey -pubout` read and write.
//
// results.json.sig is the standard base64 encoding of the 64-byte Ed25519
// signature of the RFC 8785 (JCS) canonical form of results.json, followed
// by a newline. Canonicalizing first makes the signature independent of
// whitespace and key order, so any JSON tool may re-indent the file.
//
// results.json's "integrity" member holds the SHA-256 (lower-case hex) of
// every file the run wrote beside it (evidence.json, junit.xml,
// report.html; name, size, digest), and of every recorded call: the digest
// of the bytes of each element of evidence.json's top-level "calls" array,
// from its opening to its closing brace as they stand in the file, with its
// index and probe ID. The file digests prove the folder is the one the run
// wrote; the per-call digests say which call was changed. They are computed
// by a one-pass scanner rather than over a canonical form, so hashing a
// large hostile evidence file stays cheap.
package certify
