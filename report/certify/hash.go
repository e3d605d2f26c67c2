package certify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gowebpki/jcs"

	"github.com/adcp-conform/adcp-conform/report"
)

// Algorithm is the digest every hash uses.
const Algorithm = "sha256"

// EvidenceFile is the name of the recorded evidence in a report folder.
const EvidenceFile = "evidence.json"

// Canonical returns the RFC 8785 (JCS) canonical form of a JSON document.
func Canonical(doc []byte) ([]byte, error) {
	out, err := jcs.Transform(doc)
	if err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	return out, nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Seal hashes the named files of dir and, when evidence.json is among them,
// each call it records. probeIDs are the calls' probe IDs in the file's
// order (the store's); they label the call hashes when their count matches.
func Seal(dir string, files []string, probeIDs []string) (*report.Integrity, error) {
	in := &report.Integrity{Algorithm: Algorithm, Files: []report.FileHash{}, Calls: []report.CallHash{}}
	for _, name := range files {
		h, err := hashFile(dir, name)
		if err != nil {
			return nil, err
		}
		in.Files = append(in.Files, h)
		if name == EvidenceFile {
			if in.Calls, err = hashCallsFile(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if len(probeIDs) == len(in.Calls) {
				for i := range in.Calls {
					in.Calls[i].ProbeID = probeIDs[i]
				}
			}
		}
	}
	return in, nil
}

func hashFile(dir, name string) (report.FileHash, error) {
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return report.FileHash{}, fmt.Errorf("integrity: %q is not a file name of the report folder", name)
	}
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return report.FileHash{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return report.FileHash{}, err
	}
	return report.FileHash{Name: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

func hashCallsFile(path string) ([]report.CallHash, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return hashCalls(f)
}

// HashCalls returns the hash of every call of an evidence.json document:
// the SHA-256 of the bytes of each element of its top-level "calls" array,
// from its opening to its closing brace, exactly as they stand in the file.
// The probe IDs are left empty (Seal's caller fills them in).
func HashCalls(evidence []byte) ([]report.CallHash, error) {
	return hashCalls(bytes.NewReader(evidence))
}

// hashCalls streams the document through a small JSON scanner that only
// tracks strings, nesting and the top-level keys: one pass, no decoding, so
// a large hostile evidence file hashes quickly.
func hashCalls(r io.Reader) ([]report.CallHash, error) {
	var (
		out                   = []report.CallHash{}
		depth                 int
		inString, escaped     bool
		expectKey, keyIsCalls bool
		key                   []byte
		collecting, sawTop    bool
		inCalls, callsDone    bool
		element               hash.Hash
		buf                   = make([]byte, 64<<10)
	)
	for {
		n, err := r.Read(buf)
		chunk := buf[:n]
		segStart := 0
		for i := 0; i < len(chunk); i++ {
			if inString && !escaped && !collecting {
				// Inside a string only a quote or a backslash matters: skip
				// to the next one (a reply's megabytes of text, at the
				// speed of bytes.IndexByte).
				j := quoteOrBackslash(chunk[i:])
				if j < 0 {
					i = len(chunk) - 1
					continue
				}
				i += j
			}
			c := chunk[i]
			if inString {
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
					if collecting {
						collecting = false
						keyIsCalls = string(key) == "calls"
					}
				default:
					if collecting && len(key) < 16 {
						key = append(key, c)
					}
				}
				continue
			}
			if depth == 2 && inCalls && c != '{' && c != ',' && c != ']' && c != ' ' && c != '\n' && c != '\t' && c != '\r' {
				return nil, fmt.Errorf("evidence: call %d is not an object", len(out))
			}
			switch c {
			case '"':
				inString = true
				if depth == 1 && expectKey {
					collecting, expectKey, key = true, false, key[:0]
				}
			case '{', '[':
				if depth == 0 {
					if c != '{' || sawTop {
						return nil, errors.New("evidence: not a JSON object")
					}
					sawTop, expectKey = true, true
				}
				if depth == 1 && keyIsCalls {
					if c != '[' || inCalls || callsDone {
						return nil, errors.New("evidence: calls is not an array")
					}
					inCalls = true
				} else if depth == 2 && inCalls {
					if c != '{' {
						return nil, fmt.Errorf("evidence: call %d is not an object", len(out))
					}
					element, segStart = sha256.New(), i
				}
				depth++
			case '}', ']':
				depth--
				switch {
				case depth < 0:
					return nil, errors.New("evidence: unbalanced JSON")
				case depth == 2 && inCalls && element != nil:
					element.Write(chunk[segStart : i+1])
					out = append(out, report.CallHash{Index: len(out), SHA256: hex.EncodeToString(element.Sum(nil))})
					element = nil
				case depth == 1 && inCalls:
					inCalls, callsDone, keyIsCalls = false, true, false
				}
			case ',':
				if depth == 1 {
					expectKey, keyIsCalls = true, false
				}
			case 'n':
				if depth == 1 && keyIsCalls {
					keyIsCalls, callsDone = false, true // "calls": null, an empty store
				}
			}
		}
		if element != nil {
			element.Write(chunk[segStart:])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if !sawTop || depth != 0 || inString {
		return nil, errors.New("evidence: truncated JSON")
	}
	return out, nil
}

// ErrMismatch is wrapped by every error VerifyDir and Check return for a
// report that does not match its signature or hashes.
var ErrMismatch = errors.New("mismatch")

// Check recomputes every hash in in over dir and returns one error per
// difference (nil when all match).
func Check(dir string, in *report.Integrity) []error {
	if in == nil {
		return []error{fmt.Errorf("%w: results.json has no integrity member", ErrMismatch)}
	}
	if in.Algorithm != Algorithm {
		return []error{fmt.Errorf("%w: unknown digest algorithm %q", ErrMismatch, in.Algorithm)}
	}
	var errs []error
	evidenceListed := false
	for _, want := range in.Files {
		got, err := hashFile(dir, want.Name)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%w: %s: %v", ErrMismatch, want.Name, err))
		case got.SHA256 != want.SHA256 || got.Size != want.Size:
			errs = append(errs, fmt.Errorf("%w: %s: sha256 %s (%d bytes), results.json says %s (%d bytes)",
				ErrMismatch, want.Name, got.SHA256, got.Size, want.SHA256, want.Size))
		}
		evidenceListed = evidenceListed || want.Name == EvidenceFile
	}
	if !evidenceListed {
		errs = append(errs, fmt.Errorf("%w: results.json does not hash %s", ErrMismatch, EvidenceFile))
		return errs
	}
	if _, err := os.Stat(filepath.Join(dir, EvidenceFile)); err != nil {
		return errs // already reported
	}
	calls, err := hashCallsFile(filepath.Join(dir, EvidenceFile))
	if err != nil {
		return append(errs, fmt.Errorf("%w: %s: %v", ErrMismatch, EvidenceFile, err))
	}
	if len(calls) != len(in.Calls) {
		errs = append(errs, fmt.Errorf("%w: %s records %d calls, results.json hashes %d", ErrMismatch, EvidenceFile, len(calls), len(in.Calls)))
	}
	for i := 0; i < len(calls) && i < len(in.Calls); i++ {
		got, want := calls[i], in.Calls[i]
		if got.SHA256 != want.SHA256 || want.Index != i {
			errs = append(errs, fmt.Errorf("%w: %s call %d (%s) does not match its hash", ErrMismatch, EvidenceFile, i, want.ProbeID))
		}
	}
	return errs
}

// quoteOrBackslash returns the index of the first '"' or '\\' in b, or -1.
func quoteOrBackslash(b []byte) int {
	q := bytes.IndexByte(b, '"')
	end := q
	if q < 0 {
		end = len(b)
	}
	if s := bytes.IndexByte(b[:end], '\\'); s >= 0 {
		return s
	}
	return q
}
