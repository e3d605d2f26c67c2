package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/report"
)

// registrySellers starts n reference sellers on loopback, each with its
// own token; every seventh drops the caller's context (CTX-01), so the
// index holds verdicts of both kinds. It returns one Target per seller.
func registrySellers(t testing.TB, n int) []Target {
	t.Helper()
	targets := make([]Target, n)
	for i := range n {
		tok := fmt.Sprintf("registry-token-%03d-5c0ffee5", i)
		opts := seller.Options{BearerToken: tok}
		if i%7 == 3 {
			opts.Faults = []seller.Fault{"CTX-01/context-dropped"}
		}
		ep, stop, err := seller.StartAll(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		targets[i] = Target{Name: fmt.Sprintf("seller %03d", i), Dir: fmt.Sprintf("s%03d", i), MCP: ep.MCP, BearerToken: tok}
	}
	return targets
}

// registryBase is a quick run: the CTX rules, no storyboards, no schemas.
func registryBase() Config {
	return Config{LabelFilter: "family:ctx", Storyboards: "off", Schemas: "off", Seed: 7, WebhookWait: time.Millisecond}
}

// readIndexFile reads an index.json, untimed.
func readIndexFile(t *testing.T, path string) Index {
	t.Helper()
	idx, err := ReadIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	return idx.Untimed()
}

// lineCounter counts the lines written to it and calls at once the
// count reaches n.
type lineCounter struct {
	n, seen atomic.Int64
	at      func()
	once    sync.Once
}

func (c *lineCounter) Write(p []byte) (int, error) {
	if c.seen.Add(int64(bytes.Count(p, []byte("\n")))) >= c.n.Load() {
		c.once.Do(c.at)
	}
	return len(p), nil
}

// An interrupted 100-target run, resumed, writes the index an
// uninterrupted run writes; the resumed run runs only what the
// interrupted one did not finish, and a third finds everything done.
func TestAnInterruptedRunResumesToTheIndexOfAnUninterruptedOne(t *testing.T) {
	n := 100 // the figure; CI's race-detector pass (all it runs of this package) runs 30
	if testing.Short() || raceEnabled {
		n = 30
	}
	targets := registrySellers(t, n)
	whole := t.TempDir()
	sum, err := Targets(t.Context(), registryBase(), targets, TargetsOptions{Out: whole, Parallel: 8})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Ran != n || sum.ExitCode != exitFailed || sum.Counts[string(report.NonConformant)] != (n+3)/7 {
		t.Fatalf("uninterrupted: %+v", sum)
	}

	resumed := t.TempDir()
	ctx, cancel := context.WithCancelCause(t.Context())
	stopAt := &lineCounter{at: func() { cancel(errors.New("interrupted by the test")) }}
	stopAt.n.Store(int64(n * 2 / 5))
	sum, err = Targets(ctx, registryBase(), targets, TargetsOptions{Out: resumed, Parallel: 8, Progress: stopAt})
	if err != nil {
		t.Fatal(err)
	}
	if sum.NotRun == 0 || sum.Ran+sum.NotRun != n {
		t.Fatalf("interrupted at %d of %d: %+v", n*2/5, n, sum)
	}
	cut := readIndexFile(t, filepath.Join(resumed, FileIndexJSON))
	if cut.Counts[VerdictMissing] != sum.NotRun || !strings.HasPrefix(cut.Targets[n-1].Error, "not run: interrupted by the test") {
		t.Errorf("the interrupted index: counts %v, last %+v", cut.Counts, cut.Targets[n-1])
	}
	// A run the interruption cut short leaves no completion record; one
	// that ended before it does (a run that ended as it came may go
	// either way: it is run again, never kept half done).
	interrupted, finished := 0, 0
	for _, e := range cut.Targets {
		_, err := os.Stat(filepath.Join(resumed, e.Dir, FileTarget))
		switch {
		case strings.Contains(e.Harness, "interrupted by the test"):
			interrupted++
			if err == nil {
				t.Errorf("%s was interrupted, yet has a %s", e.Name, FileTarget)
			}
		case err == nil:
			finished++
		}
	}
	if finished < n*2/5 { // each progress line counted came after its target's record
		t.Errorf("only %d targets left a completion record; %d had ended", finished, n*2/5)
	}
	t.Logf("interrupted after %d of %d targets ended: %d finished, %d interrupted in flight, %d not run", n*2/5, n, finished, interrupted, sum.NotRun)

	sum, err = Targets(t.Context(), registryBase(), targets, TargetsOptions{Out: resumed, Parallel: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("resumed: %d kept, %d run", sum.Kept, sum.Ran)
	if sum.Kept != finished || sum.Ran != n-finished {
		t.Errorf("resumed: kept %d, ran %d; want the %d with a completion record kept (%d were interrupted in flight)", sum.Kept, sum.Ran, finished, interrupted)
	}
	want, got := readIndexFile(t, filepath.Join(whole, FileIndexJSON)), readIndexFile(t, filepath.Join(resumed, FileIndexJSON))
	if !reflect.DeepEqual(want, got) {
		for i := range want.Targets {
			if i < len(got.Targets) && !reflect.DeepEqual(want.Targets[i], got.Targets[i]) {
				t.Errorf("entry %d:\n uninterrupted %+v\n resumed       %+v", i, want.Targets[i], got.Targets[i])
			}
		}
		t.Fatalf("the resumed index differs: counts %v, want %v", got.Counts, want.Counts)
	}
	sum, err = Targets(t.Context(), registryBase(), targets, TargetsOptions{Out: resumed, Parallel: 8})
	if err != nil || sum.Kept != n || sum.Ran != 0 {
		t.Errorf("a third run: %+v, %v; want every target kept", sum, err)
	}
}

// The shards of a targets list, each run on its own into one folder,
// merged, give the index of the whole list run at once.
func TestShardsMergedGiveTheIndexOfTheWholeRun(t *testing.T) {
	targets := registrySellers(t, 12)
	whole, sharded := t.TempDir(), t.TempDir()
	if _, err := Targets(t.Context(), registryBase(), targets, TargetsOptions{Out: whole, Parallel: 4}); err != nil {
		t.Fatal(err)
	}
	total := 0
	for i := 1; i <= 3; i++ {
		sum, err := Targets(t.Context(), registryBase(), targets, TargetsOptions{Out: sharded, Parallel: 4, Shard: Shard{Part: i, Count: 3}})
		if err != nil {
			t.Fatal(err)
		}
		total += sum.Targets
		if idx := readIndexFile(t, filepath.Join(sharded, fmt.Sprintf("index.shard-%d-of-3.json", i))); idx.Shard != fmt.Sprintf("%d/3", i) || len(idx.Targets) != sum.Targets {
			t.Errorf("shard %d's index: shard %q, %d entries", i, idx.Shard, len(idx.Targets))
		}
	}
	if total != len(targets) {
		t.Fatalf("the shards hold %d targets, want %d", total, len(targets))
	}
	folders := make([]IndexFolder, len(targets))
	for i, tg := range targets {
		folders[i] = IndexFolder{Name: tg.Name, Dir: filepath.Join(sharded, tg.Dir)}
	}
	if _, err := Merge(sharded, folders, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	want, got := readIndexFile(t, filepath.Join(whole, FileIndexJSON)), readIndexFile(t, filepath.Join(sharded, FileIndexJSON))
	if !reflect.DeepEqual(want, got) {
		t.Errorf("merged shards:\n%+v\nwhole run:\n%+v", got, want)
	}
}

// A target's shard is its folder's alone: it stays when other targets are
// added or removed; each target is in exactly one shard; many targets
// spread evenly enough.
func TestAShardDependsOnTheTargetsFolderAlone(t *testing.T) {
	const n, shards = 3000, 3
	per := make([]int, shards)
	for i := range n {
		dir := fmt.Sprintf("seller-%d.example", i)
		in := 0
		for s := range shards {
			if (Shard{Part: s + 1, Count: shards}).Holds(dir) {
				in++
				per[s]++
			}
		}
		if in != 1 {
			t.Fatalf("%s is in %d shards", dir, in)
		}
	}
	for s, c := range per {
		if c < n/shards*9/10 || c > n/shards*11/10 {
			t.Errorf("shard %d holds %d of %d", s, c, n)
		}
	}
	// The assignment is fixed: a hash of the name, FNV-1a, never the
	// target's place in the list.
	if !(Shard{Part: 3, Count: 3}).Holds("acme") || !(Shard{Part: 1, Count: 3}).Holds("initech") || !(Shard{Count: 0}).Holds("anything") {
		t.Error("acme moved shard: the assignment of existing folders must never change")
	}
	for in, want := range map[string]Shard{"1/3": {1, 3}, " 3 / 3 ": {3, 3}, "1/1": {1, 1}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v", in, got, err)
		}
	}
	for in, want := range map[string]Shard{"0/3": {1, 3}, "2/3": {3, 3}, "0/1": {1, 1}} {
		if got, err := ParseShardIndex(in); err != nil || got != want {
			t.Errorf("ParseShardIndex(%q) = %v, %v", in, got, err)
		}
	}
	for in, want := range map[string]string{"0/3": "shards count from 1 (1/3 … 3/3)", "1": "want I/N", "4/3": "between 1 and 3", "-1/3": "between 1 and 3",
		"1/0": "between 1 and", "a/b": "want I/N", "1/10001": "between 1 and 10000"} {
		if _, err := ParseShard(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseShard(%q): %v, want %q", in, err, want)
		}
	}
	for in, want := range map[string]string{"3/3": "an index counts from 0 (0/3 … 2/3)", "-1/3": "between 0 and 2", "x": "want I/N"} {
		if _, err := ParseShardIndex(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseShardIndex(%q): %v, want %q", in, err, want)
		}
	}
}

// Targets that cannot start, hang or crash never stop the others: each is
// listed with what happened to it, and the others are judged.
func TestATargetThatCannotStartHangsOrBreaksNeverStopsTheOthers(t *testing.T) {
	good := registrySellers(t, 3)
	hang := hostile.StartMCP(hostile.NoAnswer)
	t.Cleanup(hang.Stop)
	reset := hostile.StartMCP(hostile.ResetMidBody)
	t.Cleanup(reset.Stop)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a port nothing answers on once closed
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	targets := []Target{
		good[0],
		{Name: "refused", Dir: "refused", MCP: "ftp://nowhere.example/mcp"},
		{Name: "no secret", Dir: "nosecret", MCP: good[1].MCP, Prepare: func(*Config) error { return errors.New("the secret store is down") }},
		{Name: "panics", Dir: "panics", MCP: good[1].MCP, Prepare: func(*Config) error { panic("a bug in the registry's code") }},
		{Name: "hangs", Dir: "hangs", MCP: hang.URL},
		{Name: "resets", Dir: "resets", MCP: reset.URL},
		{Name: "down", Dir: "down", MCP: closed},
		good[1], good[2],
	}
	base := registryBase()
	base.Timeout, base.Deadline = 500*time.Millisecond, 3*time.Second
	out := t.TempDir()
	var progress bytes.Buffer
	started := time.Now()
	sum, err := Targets(t.Context(), base, targets, TargetsOptions{Out: out, Parallel: 3, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 30*time.Second {
		t.Errorf("took %v", took)
	}
	idx := readIndexFile(t, filepath.Join(out, FileIndexJSON))
	if len(idx.Targets) != len(targets) || sum.ExitCode != exitUsage {
		t.Fatalf("%d entries, exit %d", len(idx.Targets), sum.ExitCode)
	}
	want := map[string]struct {
		verdict string
		exit    int
		says    string
	}{
		"refused":   {VerdictMissing, exitUsage, "want an http or https URL"},
		"no secret": {VerdictMissing, exitUsage, "the secret store is down"},
		"panics":    {VerdictMissing, exitHarness, "internal error: a bug in the registry's code"},
		"hangs":     {string(report.HarnessError), exitHarness, ""},
		"down":      {string(report.HarnessError), exitHarness, ""},
	}
	for _, e := range idx.Targets {
		w, odd := want[e.Name]
		switch {
		case odd && (e.Verdict != w.verdict || e.ExitCode != w.exit || !strings.Contains(e.Error, w.says)):
			t.Errorf("%s: %+v; want %s, exit %d, %q", e.Name, e, w.verdict, w.exit, w.says)
		case e.Name == "resets" && e.Verdict == string(report.Conformant):
			t.Errorf("resets: %+v", e)
		case strings.HasPrefix(e.Name, "seller") && e.Verdict != string(report.Conformant) && e.Verdict != string(report.NonConformant):
			t.Errorf("%s was not judged: %+v", e.Name, e)
		}
	}
	if log, err := os.ReadFile(filepath.Join(out, "panics", FileRunLog)); err != nil || !bytes.Contains(log, []byte("a bug in the registry's code")) {
		t.Errorf("panics' run.log: %q, %v", log, err)
	}
	if got := strings.Count(progress.String(), "\n"); got != len(targets) {
		t.Errorf("%d progress lines, want %d:\n%s", got, len(targets), progress.String())
	}
}

// A result is kept only when it is complete and verified: changed
// settings, a rewritten report, a harness error (by default) and --rerun
// all run the target again.
func TestOnlyACompleteVerifiedResultIsKept(t *testing.T) {
	targets := registrySellers(t, 1)
	targets = append(targets, Target{Name: "down", Dir: "down", MCP: "http://127.0.0.1:1/mcp"})
	out := t.TempDir()
	again := func(base Config, rerun Rerun) *IndexSummary {
		t.Helper()
		sum, err := Targets(t.Context(), base, targets, TargetsOptions{Out: out, Rerun: rerun})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	base := registryBase()
	if s := again(base, RerunErrored); s.Ran != 2 {
		t.Fatalf("first run: %+v", s)
	}
	if s := again(base, RerunErrored); s.Kept != 1 || s.Ran != 1 {
		t.Errorf("the harness error is run again, the seller's result kept: %+v", s)
	}
	if s := again(base, RerunNone); s.Kept != 2 {
		t.Errorf("--rerun none keeps the harness error too: %+v", s)
	}
	if s := again(base, RerunAll); s.Ran != 2 {
		t.Errorf("--rerun all: %+v", s)
	}
	changed := base
	changed.Strict = true
	if s := again(changed, RerunNone); s.Ran != 2 {
		t.Errorf("other settings: %+v", s)
	}
	// A report rewritten after the run: its hashes no longer match.
	report := filepath.Join(out, targets[0].Dir, FileHTML)
	if err := os.WriteFile(report, []byte("<p>all green</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := again(changed, RerunNone); s.Ran != 1 || s.Kept != 1 {
		t.Errorf("a rewritten report.html: %+v", s)
	}
	// A results.json rewritten, its hashes intact: not the one the run wrote.
	results := filepath.Join(out, targets[0].Dir, FileResults)
	b, _ := os.ReadFile(results)
	if err := os.WriteFile(results, append(b, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := again(changed, RerunNone); s.Ran != 1 || s.Kept != 1 {
		t.Errorf("a rewritten results.json: %+v", s)
	}
}

// Every field of Config is either part of the settings a kept result is
// matched on, or left out for a reason: a field added to Config must be
// placed in one or the other.
func TestEveryConfigFieldIsInTheResumeSettingsOrLeftOutForAReason(t *testing.T) {
	leftOut := map[string]string{
		"BearerToken":     "a credential: a rotated token changes nothing the seller is judged on, and a hash of a weak one could be reversed",
		"LiveBearerToken": "a credential (whether one is given is in the settings)",
		"Parallel":        "the verdicts do not depend on the probes in flight",
		"Out":             "the folder itself",
		"Log":             "where progress goes",
		"Verbose":         "how much progress says",
		"Redact":          "the caller's redaction hook",
		"Network":         "a test's network; the endpoints are in the settings",
		"TLS":             "no stable form; whether one is given is in the settings",
		"Header":          "values may be credentials; the names are in the settings",
		"SignKey":         "a private key; its public key is in the settings",
	}
	base := Config{MCP: "http://127.0.0.1:1/mcp"}
	fp0, err := settingsOf(base)
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(&base).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		changed := base
		set(t, reflect.ValueOf(&changed).Elem().Field(i))
		fp, err := settingsOf(changed)
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		_, out := leftOut[f.Name]
		switch {
		case out && fp != fp0 && f.Name != "LiveBearerToken" && f.Name != "TLS" && f.Name != "Header" && f.Name != "SignKey":
			t.Errorf("%s is left out of the settings (%s), yet changes them", f.Name, leftOut[f.Name])
		case !out && fp == fp0:
			t.Errorf("Config.%s changes nothing in the settings a kept result is matched on: add it to settingsOf, or leave it out for a reason", f.Name)
		}
	}
}

// set gives v a value other than its zero and its default.
func set(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("https://x.example/changed")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(3)
	case reflect.Uint64:
		v.SetUint(3)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // an ed25519 key
			v.SetBytes(bytes.Repeat([]byte{7}, 64))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		set(t, s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		e := reflect.New(v.Type().Elem()).Elem()
		set(t, e)
		m.SetMapIndex(reflect.ValueOf("X-Changed").Convert(v.Type().Key()), e)
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if p.Elem().Kind() == reflect.Struct && p.Elem().NumField() > 0 && p.Elem().Field(0).CanSet() {
			set(t, p.Elem().Field(0))
		}
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				set(t, v.Field(i))
				return
			}
		}
	case reflect.Interface, reflect.Func:
		if v.Type() == reflect.TypeOf((*io.Writer)(nil)).Elem() {
			v.Set(reflect.ValueOf(io.Discard))
			return
		}
		if v.Kind() == reflect.Func {
			v.Set(reflect.MakeFunc(v.Type(), func([]reflect.Value) []reflect.Value { return nil }))
		}
	default:
		t.Fatalf("no value for a %s", v.Type())
	}
}

// Targets refuses a list it cannot run before running any: folders that
// are not plain names or repeat, a base that names a target.
func TestTargetsRefusesAListItCannotRun(t *testing.T) {
	ok := Target{Dir: "a", MCP: "http://127.0.0.1:1/mcp"}
	for name, tc := range map[string]struct {
		base    Config
		targets []Target
		want    string
	}{
		"no targets":        {Config{}, nil, "no targets"},
		"an escaping dir":   {Config{}, []Target{{Dir: "../x", MCP: ok.MCP}}, "plain folder name"},
		"a dir used twice":  {Config{}, []Target{ok, ok}, "used twice"},
		"a base with a URL": {Config{MCP: ok.MCP}, []Target{ok}, "names each target's"},
	} {
		_, err := Targets(t.Context(), tc.base, tc.targets, TargetsOptions{Out: t.TempDir()})
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(ce.Msg, tc.want) {
			t.Errorf("%s: %v, want a ConfigError %q", name, err, tc.want)
		}
	}
	if slices.Contains(rerunNames, "") {
		t.Error("a rerun without a name")
	}
}

// The storyboards and schemas of local folders are read once for every
// target (Prefetch) and shared by the runs going on at once: each target
// runs the storyboards and validates against the schemas, and all judge
// alike.
func TestTargetsShareLocalStoryboardsAndSchemas(t *testing.T) {
	root := shared.Root()
	if root == "" {
		t.Skip("no ../shared (or $ADCP_CONFORM_SHARED) with the spec's compliance storyboards and schemas")
	}
	targets := registrySellers(t, 3)
	base := Config{Storyboards: filepath.Join(root, "spec", "compliance", "3.1.19"), Schemas: filepath.Join(root, "spec", "schemas", "3.1.19"),
		LabelFilter: "family:schema || kind:universal", Seed: 7, WebhookWait: time.Millisecond}
	out := t.TempDir()
	if _, err := Targets(t.Context(), base, targets, TargetsOptions{Out: out, Parallel: 3}); err != nil {
		t.Fatal(err)
	}
	var first *report.Run
	for _, tg := range targets {
		b, err := os.ReadFile(filepath.Join(out, tg.Dir, FileResults))
		if err != nil {
			t.Fatal(err)
		}
		var r report.Run
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.StoryboardsRelease != "3.1.19" || r.SchemasRelease != "3.1.19" || len(r.Storyboards) == 0 {
			t.Errorf("%s: storyboards %q (%d), schemas %q", tg.Name, r.StoryboardsRelease, len(r.Storyboards), r.SchemasRelease)
		}
		if first == nil {
			first = &r
		} else if r.Counts.Of("passed") != first.Counts.Of("passed") || len(r.Storyboards) != len(first.Storyboards) {
			t.Errorf("%s: %v passed, %d storyboards; the first target: %v, %d", tg.Name, r.Counts, len(r.Storyboards), first.Counts, len(first.Storyboards))
		}
	}
}

// Untimed drops the times and only them, from a copy: two runs' indexes
// compare equal by what they judged, never vacuously.
func TestUntimedDropsTheTimesAndOnlyThem(t *testing.T) {
	at := time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC)
	idx := Index{Tool: "adcp-conform", Version: "v1", GeneratedAt: at, DurationMS: 9, Counts: map[string]int{"conformant": 1, "non_conformant": 1},
		Targets: []IndexEntry{{Name: "a", Dir: "a", Verdict: "conformant", StartedAt: at, DurationMS: 3},
			{Name: "b", Dir: "b", Verdict: "non_conformant", ExitCode: 1, Failed: []string{"CTX-01"}, StartedAt: at, DurationMS: 4}}}
	u := idx.Untimed()
	want := Index{Tool: "adcp-conform", Version: "v1", Counts: idx.Counts,
		Targets: []IndexEntry{{Name: "a", Dir: "a", Verdict: "conformant"}, {Name: "b", Dir: "b", Verdict: "non_conformant", ExitCode: 1, Failed: []string{"CTX-01"}}}}
	if !reflect.DeepEqual(u, want) {
		t.Errorf("Untimed:\n%+v\nwant\n%+v", u, want)
	}
	if idx.Targets[0].StartedAt != at || idx.GeneratedAt != at {
		t.Error("Untimed changed the index it was called on")
	}
	other := idx
	other.Targets = slices.Clone(idx.Targets)
	other.Targets[1].Failed = nil
	if reflect.DeepEqual(other.Untimed(), u) {
		t.Error("two indexes that judged differently compare equal untimed")
	}
	path := filepath.Join(t.TempDir(), FileIndexJSON)
	b, _ := json.Marshal(idx)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadIndex(path); err != nil || !reflect.DeepEqual(got.Untimed(), u) {
		t.Errorf("ReadIndex: %+v, %v", got, err)
	}
	if _, err := ReadIndex(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("ReadIndex of no file")
	}
}
