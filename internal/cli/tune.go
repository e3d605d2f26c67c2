package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/conform"
)

// MaxParallel bounds --parallel and --parallel-targets.
const MaxParallel = conform.MaxParallel

// DefaultParallelTargets is how many targets of a --targets file are run at
// once by default.
const DefaultParallelTargets = conform.DefaultParallelTargets

// tuneFlags are the run's speed and limit flags: probe concurrency, the
// byte limits a user may need to raise for a seller with large replies, and
// the targets file of a registry run.
type tuneFlags struct {
	parallel        int
	maxBody         byteSize
	maxEvent        byteSize
	maxEvidence     byteSize
	maxTotal        byteSize
	targets         string
	parallelTargets int
	shard           string
	shardIndex      string
	rerun           string
}

// addTuneFlags registers --parallel, --max-body, --max-event,
// --max-evidence, --targets and --parallel-targets on fs.
func addTuneFlags(fs *flag.FlagSet) *tuneFlags {
	t := &tuneFlags{maxBody: byteSize(wire.DefaultMaxBodyBytes), maxEvent: byteSize(wire.DefaultMaxEventBytes),
		maxEvidence: byteSize(wire.DefaultMaxEvidenceBytes), maxTotal: byteSize(wire.DefaultMaxTotalBytes)}
	fs.IntVar(&t.parallel, "parallel", plan.DefaultConcurrency, fmt.Sprintf("`N` probes in flight at once, per transport (1 to %d; results do not depend on it)", MaxParallel))
	fs.Var(&t.maxBody, "max-body", "the `SIZE` in bytes of one response body read and kept (e.g. 8MiB); a longer body is cut and flagged truncated")
	fs.Var(&t.maxEvent, "max-event", "the `SIZE` in bytes of one SSE event (e.g. 1MiB); a longer event ends the stream")
	fs.Var(&t.maxEvidence, "max-evidence", "the `SIZE` in bytes kept as evidence of a body cut at --max-body or --max-event (e.g. 64KiB)")
	fs.Var(&t.maxTotal, "max-total", "the `SIZE` in bytes of evidence the whole run keeps (e.g. 64MiB); beyond it a reply keeps its size and SHA-256 only, and the calls it answered are harness errors")
	fs.Var(&targetValue{&t.targets, "the targets file"}, "targets", "YAML or JSON `FILE` of targets (mcp, a2a, bearer_env or oauth_*, out): run each, one report folder per target under --out, and an index (an empty value is refused)")
	fs.IntVar(&t.parallelTargets, "parallel-targets", DefaultParallelTargets, fmt.Sprintf("`N` targets of --targets run at once (1 to %d)", MaxParallel))
	fs.StringVar(&t.shard, "shard", "", "with --targets: run only shard `I/N` of the targets file, counted from 1 (1/3, 2/3, 3/3): a target's shard is a hash of its folder name, so every shard finds its part alone")
	fs.StringVar(&t.shardIndex, "shard-index", "", "with --targets: --shard counted from 0, `I/N` as a scheduler numbers its workers (Kubernetes' $(JOB_COMPLETION_INDEX)/N, GitHub Actions' strategy.job-index/job-total): 0/3 is --shard 1/3")
	fs.StringVar(&t.rerun, "rerun", conform.RerunErrored.String(), "with --targets: `WHICH` targets to run again although their folder holds a complete, verified result of a run with the same settings: errored (those whose result is a harness error), none, or all")
	return t
}

// targetsOptions are the options of a --targets run into out: its
// parallelism, its shard, what it runs again.
func (t *tuneFlags) targetsOptions(out string) (conform.TargetsOptions, error) {
	opts := conform.TargetsOptions{Out: out, Parallel: t.parallelTargets}
	var err error
	switch {
	case t.shard != "" && t.shardIndex != "":
		return opts, usagef("--shard and --shard-index name one shard two ways: give one")
	case t.shard != "":
		if opts.Shard, err = conform.ParseShard(t.shard); err != nil {
			return opts, usagef("--shard %v", err)
		}
	case t.shardIndex != "":
		if opts.Shard, err = conform.ParseShardIndex(t.shardIndex); err != nil {
			return opts, usagef("--shard-index %v", err)
		}
	}
	r, err := conform.ParseRerun(t.rerun)
	if err != nil {
		return opts, usagef("--rerun %v", err)
	}
	opts.Rerun = r
	return opts, nil
}

// apply checks the flags and sets them on the run's configuration.
func (t *tuneFlags) apply(cfg *conform.Config) error {
	if t.parallel < 1 || t.parallel > MaxParallel {
		return usagef("--parallel must be between 1 and %d", MaxParallel)
	}
	if t.parallelTargets < 1 || t.parallelTargets > MaxParallel {
		return usagef("--parallel-targets must be between 1 and %d", MaxParallel)
	}
	if t.targets == "" && (t.shard != "" || t.shardIndex != "" || t.rerun != conform.RerunErrored.String()) {
		return usagef("--shard, --shard-index and --rerun split and resume a --targets run: give --targets too")
	}
	const maxLimit = 1 << 30
	for name, v := range map[string]byteSize{"--max-body": t.maxBody, "--max-event": t.maxEvent, "--max-evidence": t.maxEvidence, "--max-total": t.maxTotal} {
		if v < 1 || v > maxLimit {
			return usagef("%s must be between 1 byte and 1GiB", name)
		}
	}
	cfg.Parallel = t.parallel
	cfg.MaxBody, cfg.MaxEvent, cfg.MaxEvidence, cfg.MaxTotal = int64(t.maxBody), int64(t.maxEvent), int64(t.maxEvidence), int64(t.maxTotal)
	return nil
}

// byteSize is a flag value in bytes: a plain number or one with a unit
// (KB, MB, GB: powers of 1000; KiB, MiB, GiB: powers of 1024; B).
type byteSize int64

func (b *byteSize) String() string {
	if b == nil {
		return "0"
	}
	n := int64(*b)
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error {
	n, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

func parseByteSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"B", 1}}
	up := strings.ToUpper(s)
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(up, u.suffix) {
			up, mult = strings.TrimSpace(strings.TrimSuffix(up, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(up, 10, 64)
	if err != nil || n < 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("%q: want a size in bytes such as 8MiB, 512KB or 65536", s)
	}
	return n * mult, nil
}
