package conform

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
)

// The files of a many-target run (Targets) and of Merge: the index across
// the targets' report folders, and each target's console output and
// completion record in its folder.
const (
	FileIndexHTML = "index.html"
	FileIndexJSON = "index.json"
	FileRunLog    = "run.log"
)

// MaxTargets bounds the targets of one Targets or Merge call.
const MaxTargets = 10000

// VerdictMissing is the verdict of an index entry whose folder holds no
// readable results.json: a target not run (interrupted before its turn),
// refused (its configuration), or a folder that is not a report.
const VerdictMissing = "missing"

// Index is index.json: one entry per target's report folder.
type Index struct {
	Tool        string         `json:"tool"`
	Version     string         `json:"version"`
	GeneratedAt time.Time      `json:"generated_at"`
	DurationMS  float64        `json:"duration_ms,omitempty"`
	Shard       string         `json:"shard,omitempty"` // "I/N" for a shard's own index
	Counts      map[string]int `json:"counts"`          // targets per verdict
	Targets     []IndexEntry   `json:"targets"`
}

// IndexEntry is one target in the index.
type IndexEntry struct {
	Name string `json:"name"`
	// Dir is the report folder, relative to the index when possible.
	Dir    string `json:"dir"`
	Target string `json:"target,omitempty"`
	// TargetKind is the folder's results.json target_kind: "seller", or
	// "bundled_reference" for a run against the bundled reference seller.
	TargetKind string        `json:"target_kind,omitempty"`
	Verdict    string        `json:"verdict"`
	ExitCode   int           `json:"exit_code"`
	Counts     report.Counts `json:"counts,omitempty"`
	Failed     []string      `json:"failed_rules,omitempty"`
	Harness    string        `json:"harness_error,omitempty"`
	StartedAt  time.Time     `json:"started_at"`
	DurationMS float64       `json:"duration_ms"`
	Error      string        `json:"error,omitempty"` // no readable results.json
}

// ReadIndex reads an index.json that Targets or Merge wrote (at most
// 1 GiB).
func ReadIndex(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var idx Index
	if err := json.NewDecoder(io.LimitReader(f, maxResultsBytes)).Decode(&idx); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &idx, nil
}

// Untimed is the index without what differs between two runs that judged
// alike: when it was written, how long it and each target's run took, when
// each started. An interrupted run resumed and an uninterrupted one, or
// the shards of a list merged and the whole list run at once, give equal
// untimed indexes.
func (idx Index) Untimed() Index {
	idx.GeneratedAt, idx.DurationMS = time.Time{}, 0
	idx.Targets = slices.Clone(idx.Targets)
	for i := range idx.Targets {
		idx.Targets[i].StartedAt, idx.Targets[i].DurationMS = time.Time{}, 0
	}
	return idx
}

// IndexSummary is what a Targets or Merge call says of its index: the
// entries themselves are in index.json, never all held in memory.
type IndexSummary struct {
	// Targets is the number of entries; Counts the entries per verdict.
	Targets int
	Counts  map[string]int
	// Ran and Kept are the targets run by this call and those whose folder
	// already held a complete result (Targets; zero for Merge). NotRun are
	// those never started: the context was cancelled before their turn.
	Ran, Kept, NotRun int
	// ExitCode is the worst across the entries: 2 when a target's
	// configuration was refused, else 1 when a target is non-conformant,
	// else 3 when a target ended in a harness error (or has no results),
	// else 0.
	ExitCode int
	// JSON and HTML are the index files written.
	JSON, HTML string
}

// The exit codes an index entry takes (as the command line's).
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitHarness = 3
)

// exitRank orders exit codes from best to worst for the index's own.
var exitRank = map[int]int{exitOK: 0, exitHarness: 1, exitFailed: 2, exitUsage: 3}

func worseExit(a, b int) int {
	rb, ok := exitRank[b]
	if !ok {
		rb, b = exitRank[exitHarness], exitHarness
	}
	if rb > exitRank[a] {
		return b
	}
	return a
}

// IndexFolder is one report folder for Merge: its name in the index and
// the folder.
type IndexFolder struct {
	Name, Dir string
}

// MergeOptions are Merge's settings.
type MergeOptions struct {
	// Summary, when set, receives one terminal-safe line per entry, in
	// order, and the counts line.
	Summary io.Writer
	// Version is the harness version the index names; "": this module's.
	Version string
}

// Merge builds the index (index.json, index.html) in out across report
// folders written anywhere — by Run, by Targets (one shard each, say), by
// a CI matrix or a Kubernetes Indexed Job: one entry per folder, in order,
// read from its results.json; a folder without a readable one is listed as
// missing, not dropped. The folders' reports are read one at a time and
// the entries streamed to the index: memory does not grow with their
// number.
func Merge(out string, folders []IndexFolder, opts MergeOptions) (*IndexSummary, error) {
	if len(folders) > MaxTargets {
		return nil, configf("%d folders, at most %d", len(folders), MaxTargets)
	}
	if err := WritableOut(out); err != nil {
		return nil, err
	}
	w, err := newIndexWriter(out, len(folders))
	if err != nil {
		return nil, err
	}
	defer w.close()
	for i, f := range folders {
		e, _ := readEntry(out, f.Name, f.Dir)
		if err := w.add(i, e); err != nil {
			return nil, err
		}
	}
	version := opts.Version
	if version == "" {
		version = moduleVersion()
	}
	return w.write(indexHead{Tool: "adcp-conform", Version: version, GeneratedAt: time.Now().UTC()}, "", nil, opts.Summary)
}

// readEntry is the index entry of the report folder dir, read from its
// results.json, with the run it read (nil when there is none).
func readEntry(indexDir, name, dir string) (IndexEntry, *report.Run) {
	e := IndexEntry{Name: name, Dir: relDir(indexDir, dir)}
	r, _, err := readResults(filepath.Join(dir, FileResults))
	if err != nil {
		e.Verdict, e.Error, e.ExitCode = VerdictMissing, wire.Sanitize(err.Error(), 300), exitHarness
		return e, nil
	}
	return entryOf(e, r), r
}

// entryOf fills e from the run r.
func entryOf(e IndexEntry, r *report.Run) IndexEntry {
	e.Target, e.Verdict, e.Counts = wire.Sanitize(r.Target, 500), string(r.Verdict), r.Counts
	e.TargetKind = wire.Sanitize(string(r.TargetKind), 40)
	e.Harness, e.StartedAt, e.DurationMS = wire.Sanitize(r.HarnessError, 500), r.StartedAt, r.DurationMS
	e.ExitCode = r.ExitCode()
	for _, rule := range r.Rules {
		if rule.Failing() {
			e.Failed = append(e.Failed, wire.Sanitize(rule.ID, 40))
		}
	}
	return e
}

// maxResultsBytes bounds the results.json an index reads.
const maxResultsBytes = 1 << 30

// readResults reads a results.json (at most 1 GiB) and returns it with
// the SHA-256 of its bytes, taken as they are read.
func readResults(path string) (*report.Run, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	h := sha256.New()
	var r report.Run
	dec := json.NewDecoder(io.TeeReader(io.LimitReader(f, maxResultsBytes), h))
	if err := dec.Decode(&r); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	// The hash covers the whole file, whatever follows the document.
	if _, err := io.Copy(io.Discard, dec.Buffered()); err != nil {
		return nil, nil, err
	}
	if _, err := io.Copy(h, io.LimitReader(f, maxResultsBytes)); err != nil {
		return nil, nil, err
	}
	return &r, h.Sum(nil), nil
}

func relDir(base, dir string) string {
	ab, err1 := filepath.Abs(base)
	ad, err2 := filepath.Abs(dir)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(ab, ad); err == nil {
			return filepath.ToSlash(rel)
		}
		return filepath.ToSlash(ad)
	}
	return filepath.ToSlash(dir)
}

// indexWriter collects an index's entries as they come, in any order, in
// a spool file beside the index, and writes the index from it in the
// targets' order: only the entries' offsets are held.
type indexWriter struct {
	dir    string
	mu     sync.Mutex
	spool  *os.File
	end    int64
	at     []int64 // offset of entry i in the spool; -1 until added
	size   []int32
	counts map[string]int
	exit   int
}

func newIndexWriter(dir string, n int) (*indexWriter, error) {
	f, err := os.CreateTemp(dir, ".adcp-conform-index-*.jsonl")
	if err != nil {
		return nil, err
	}
	w := &indexWriter{dir: dir, spool: f, at: make([]int64, n), size: make([]int32, n), counts: map[string]int{}}
	for i := range w.at {
		w.at[i] = -1
	}
	return w, nil
}

// add records entry i.
func (w *indexWriter) add(i int, e IndexEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.spool.WriteAt(b, w.end); err != nil {
		return err
	}
	w.at[i], w.size[i] = w.end, int32(len(b))
	w.end += int64(len(b))
	w.counts[e.Verdict]++
	w.exit = worseExit(w.exit, e.ExitCode)
	return nil
}

// each calls fn with every entry added, in order.
func (w *indexWriter) each(fn func(raw []byte, e IndexEntry) error) error {
	var buf []byte
	for i, at := range w.at {
		if at < 0 {
			return fmt.Errorf("index: entry %d was never added", i)
		}
		buf = append(buf[:0], make([]byte, w.size[i])...)
		if _, err := w.spool.ReadAt(buf, at); err != nil {
			return err
		}
		var e IndexEntry
		if err := json.Unmarshal(buf, &e); err != nil {
			return err
		}
		if err := fn(buf, e); err != nil {
			return err
		}
	}
	return nil
}

func (w *indexWriter) close() {
	name := w.spool.Name()
	w.spool.Close()
	os.Remove(name)
}

// indexHead is index.json without its entries.
type indexHead struct {
	Tool        string         `json:"tool"`
	Version     string         `json:"version"`
	GeneratedAt time.Time      `json:"generated_at"`
	DurationMS  float64        `json:"duration_ms,omitempty"`
	Shard       string         `json:"shard,omitempty"`
	Counts      map[string]int `json:"counts"`
}

// write writes the index files into the writer's folder — index.json and
// index.html, or, for a shard (name "" otherwise), index.shard-I-of-N.json
// and .html — redacted by red (nil: as they are), and the summary lines
// to text (nil: none).
func (w *indexWriter) write(head indexHead, shard string, red *wire.Redactor, text io.Writer) (*IndexSummary, error) {
	head.Counts, head.Shard = w.counts, shard
	base := "index"
	if shard != "" {
		i, n, _ := strings.Cut(shard, "/")
		base = fmt.Sprintf("index.shard-%s-of-%s", i, n)
	}
	sum := &IndexSummary{Targets: len(w.at), Counts: w.counts, ExitCode: w.exit,
		JSON: filepath.Join(w.dir, base+".json"), HTML: filepath.Join(w.dir, base+".html")}
	err := writeRedactedFile(red, sum.JSON, func(out io.Writer) error {
		b, err := json.MarshalIndent(head, "", "  ")
		if err != nil {
			return err
		}
		bw := bufio.NewWriter(out)
		bw.Write(b[:len(b)-2]) // without the closing "\n}"
		bw.WriteString(",\n  \"targets\": [")
		n := 0
		err = w.each(func(raw []byte, _ IndexEntry) error {
			var ind bytes.Buffer
			if err := json.Indent(&ind, raw, "    ", "  "); err != nil {
				return err
			}
			if n > 0 {
				bw.WriteString(",")
			}
			n++
			bw.WriteString("\n    ")
			_, err := bw.Write(ind.Bytes())
			return err
		})
		if err != nil {
			return err
		}
		if n > 0 {
			bw.WriteString("\n  ")
		}
		bw.WriteString("]\n}\n")
		return bw.Flush()
	})
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", filepath.Base(sum.JSON), err)
	}
	err = writeRedactedFile(red, sum.HTML, func(out io.Writer) error {
		bw := bufio.NewWriter(out)
		page := struct {
			indexHead
			N int
		}{head, len(w.at)}
		if err := indexPage.ExecuteTemplate(bw, "head", page); err != nil {
			return err
		}
		err := w.each(func(_ []byte, e IndexEntry) error { return indexPage.ExecuteTemplate(bw, "row", e) })
		if err != nil {
			return err
		}
		if err := indexPage.ExecuteTemplate(bw, "foot", nil); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", filepath.Base(sum.HTML), err)
	}
	if text != nil {
		tw := text
		if red != nil {
			rw := red.Writer(text)
			defer rw.Close()
			tw = rw
		}
		err := w.each(func(_ []byte, e IndexEntry) error {
			writeIndexLine(tw, e)
			return nil
		})
		if err != nil {
			return nil, err
		}
		fmt.Fprintln(tw, countsLine(sum.Targets, sum.Counts))
	}
	return sum, nil
}

// writeRedactedFile writes what fn writes to path, redacted by red (nil:
// as it is) as it streams.
func writeRedactedFile(red *wire.Redactor, path string, fn func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := red.Writer(f)
	if err := fn(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeIndexLine prints one terminal-safe line for the entry e.
func writeIndexLine(w io.Writer, e IndexEntry) {
	detail := strings.Join(e.Failed, " ")
	if e.Harness != "" {
		detail = e.Harness
	}
	if e.Error != "" {
		detail = e.Error
	}
	if e.TargetKind == string(report.TargetBundledReference) {
		detail = strings.TrimSpace("[" + report.ReferenceLabel + "] " + detail)
	}
	fmt.Fprintf(w, "  %-16s %-32s %s\n", wire.Sanitize(e.Verdict, 16), wire.Sanitize(e.Name, 32), wire.Sanitize(detail, 220))
}

// countsLine is the index's last line: the targets, and how many of each
// verdict.
func countsLine(n int, counts map[string]int) string {
	var parts []string
	for _, v := range []string{string(report.Conformant), string(report.NonConformant), string(report.StaleBaseline), string(report.HarnessError), string(report.Incomplete), VerdictMissing} {
		if c := counts[v]; c > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c, v))
		}
	}
	return fmt.Sprintf("targets: %d (%s)", n, strings.Join(parts, ", "))
}

// indexPage is index.html: one row per target, linking to its report.html.
// html/template escapes every value for its context; links are relative
// folder paths, and a value that is not a safe URL becomes "#ZgotmplZ".
// It is written in three parts (head, a row per entry, foot), so the
// entries are streamed.
var indexPage = template.Must(template.New("index").Funcs(template.FuncMap{
	"report": func(dir string) string { return strings.TrimSuffix(dir, "/") + "/" + FileHTML },
	"join":   func(s []string) string { return strings.Join(s, " ") },
}).Parse(`{{define "head"}}<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>adcp-conform: {{.N}} targets{{if .Shard}} (shard {{.Shard}}){{end}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.4em .6em;text-align:left;vertical-align:top}
td.v-conformant{color:#176f2c;font-weight:600}
td.v-non_conformant,td.v-stale_baseline{color:#b3261e;font-weight:600}
td.v-error,td.v-incomplete,td.v-missing{color:#8a5a00;font-weight:600}
code{font-size:12px;word-break:break-all}
.reference{color:#8a5a00;font-weight:normal}
</style>
</head>
<body>
<h1>adcp-conform: {{.N}} targets{{if .Shard}} (shard {{.Shard}}){{end}}</h1>
<p>{{range $v, $n := .Counts}}{{$n}} {{$v}} · {{end}}generated {{.GeneratedAt.Format "2006-01-02 15:04:05 UTC"}} by adcp-conform {{.Version}}</p>
<table>
<thead><tr><th>target</th><th>verdict</th><th>passed</th><th>failed</th><th>failed rules / harness error</th><th>endpoint</th></tr></thead>
<tbody>
{{end}}{{define "row"}}<tr>
<td>{{if eq .Verdict "missing"}}{{.Name}}{{else}}<a href="{{report .Dir}}">{{.Name}}</a>{{end}}</td>
<td class="v-{{.Verdict}}">{{.Verdict}}{{if eq .TargetKind "bundled_reference"}} <span class="reference">(bundled reference seller, not a seller under test)</span>{{end}}</td>
<td>{{.Counts.Of "passed"}}</td>
<td>{{.Counts.Of "failed"}}</td>
<td>{{join .Failed}}{{if .Harness}} {{.Harness}}{{end}}{{if .Error}} {{.Error}}{{end}}</td>
<td><code>{{.Target}}</code></td>
</tr>
{{end}}{{define "foot"}}</tbody>
</table>
</body>
</html>
{{end}}`))
