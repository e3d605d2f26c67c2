package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/shared"
)

// BenchmarkRegistry measures a registry-sized --targets run
// (docs/performance.md, "Many sellers"): N reference sellers served by one
// fixtures/seller process (--listeners N, each seller its own state, port
// and token, MCP and A2A 1.0 faces), and the adcp-conform binary run once
// over all of them — read-only, --parallel-targets 8, the spec's 3.1.19
// storyboards and schemas from the spec folder internal/shared finds (else off) —
// measured from outside by the kernel: wall time, CPU (user + system) and
// peak RSS of the adcp-conform process; and, from the runtime's gctrace,
// the heap live after each collection (its median over the run and over
// the run's last tenth). The seller process's CPU is reported apart. Every target must be judged (no entry missing from the
// index). It runs only when ADCP_CONFORM_REGISTRY_N names the Ns (a run of
// 1 000 sellers takes minutes; `-bench .` over this package skips it):
//
//	ADCP_CONFORM_REGISTRY_N=10,100,1000 \
//	  go test -run '^$' -bench BenchmarkRegistry -benchtime 1x -timeout 60m ./internal/cli/
func BenchmarkRegistry(b *testing.B) {
	v := os.Getenv("ADCP_CONFORM_REGISTRY_N")
	if v == "" {
		b.Skip("set ADCP_CONFORM_REGISTRY_N=10,100,1000 (the numbers of sellers) to run it")
	}
	var ns []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > MaxTargets {
			b.Fatalf("ADCP_CONFORM_REGISTRY_N: %q", f)
		}
		ns = append(ns, n)
	}
	bin := b.TempDir()
	for _, pkg := range []string{"cmd/adcp-conform", "fixtures/seller/cmd/seller"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, filepath.Base(pkg)), "./"+pkg)
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	material := []string{"--storyboards", "off", "--schemas", "off"}
	if root := shared.Root(); root != "" {
		material = []string{"--storyboards", filepath.Join(root, "spec", "compliance", "3.1.19"), "--schemas", filepath.Join(root, "spec", "schemas", "3.1.19")}
	}
	b.Logf("material: %s", strings.Join(material, " "))
	for _, n := range ns {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			targets := filepath.Join(dir, "targets.yaml")
			const token = "registry-bench-token-0123456789"
			sellers := startSellerProcess(b, filepath.Join(bin, "seller"), n, targets, token)
			var wall, cpu time.Duration
			var rss int64
			var sellerCPU time.Duration
			var live []float64 // MB live after each collection
			for b.Loop() {
				out := filepath.Join(dir, "out")
				os.RemoveAll(out)
				cmd := exec.Command(filepath.Join(bin, "adcp-conform"), append([]string{"run", "--targets", targets, "--out", out,
					"--parallel-targets", "8", "--deadline", "5m"}, material...)...)
				// The runtime's trace of each collection: the heap left live
				// after it is what the run holds, whatever RSS the runtime
				// keeps from the OS.
				cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
				for i := range n {
					cmd.Env = append(cmd.Env, fmt.Sprintf("SELLER_TOKEN_%04d=%s-%04d", i, token, i))
				}
				logf, err := os.Create(filepath.Join(dir, "stderr.log"))
				if err != nil {
					b.Fatal(err)
				}
				cmd.Stderr, cmd.Stdout = logf, logf
				s0 := procCPU(b, sellers.Process.Pid)
				start := time.Now()
				err = cmd.Run()
				wall += time.Since(start)
				sellerCPU += procCPU(b, sellers.Process.Pid) - s0
				logf.Close()
				if code := cmd.ProcessState.ExitCode(); err != nil && code != int(ExitNonConformant) {
					tail, _ := os.ReadFile(filepath.Join(dir, "stderr.log"))
					b.Fatalf("exit %d: %v\n%s", code, err, tail[max(0, len(tail)-4000):])
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				rss = max(rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) // KiB on Linux
				log, err := os.ReadFile(filepath.Join(dir, "stderr.log"))
				if err != nil {
					b.Fatal(err)
				}
				live = append(live, liveHeaps(log)...)
				idx := indexWithoutTimes(b, out, FileIndexJSON)
				if len(idx.Targets) != n || idx.Counts[verdictMissing] > 0 {
					b.Fatalf("index: %d entries, counts %v", len(idx.Targets), idx.Counts)
				}
			}
			runs := float64(b.N)
			b.ReportMetric(wall.Seconds()/runs, "wall-s")
			b.ReportMetric(float64(n)*runs/wall.Minutes(), "targets/min")
			b.ReportMetric(float64(cpu.Milliseconds())/runs/float64(n), "cpu-ms/target")
			b.ReportMetric(float64(rss)/1024, "peak-RSS-MB")
			b.ReportMetric(float64(sellerCPU.Milliseconds())/runs/float64(n), "seller-cpu-ms/target")
			if len(live) > 0 {
				// The median and the last tenth's: flat in N, and flat
				// from the first target to the last, when nothing is held
				// per target.
				last := slices.Clone(live[len(live)*9/10:])
				slices.Sort(live)
				slices.Sort(last)
				b.ReportMetric(live[len(live)/2], "live-heap-MB")
				b.ReportMetric(last[len(last)/2], "live-heap-last10%-MB")
			}
		})
	}
}

// gcLine is a line of GODEBUG=gctrace=1: "… 82->91->42 MB, …", the last
// number the heap live after the collection.
var gcLine = regexp.MustCompile(`(?m)^gc \d+ @.* \d+->\d+->(\d+) MB`)

// liveHeaps are the live heaps (MB) of a gctrace log's collections, in order.
func liveHeaps(log []byte) []float64 {
	var mb []float64
	for _, m := range gcLine.FindAllSubmatch(log, -1) {
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		mb = append(mb, v)
	}
	return mb
}

// startSellerProcess starts the seller binary serving n sellers, seller i
// wanting token-i (--distinct-tokens: the harness redacts every target's
// token from every other's output, as a real registry's), and waits until
// it has written the targets file.
func startSellerProcess(b *testing.B, bin string, n int, targets, token string) *exec.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--listeners", strconv.Itoa(n), "--bearer-env", "SELLER_TOKEN", "--distinct-tokens", "--targets-out", targets)
	cmd.Env = append(os.Environ(), "SELLER_TOKEN="+token)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "reference sellers:") {
		b.Fatalf("the seller process said %q: %v", line, err)
	}
	return cmd
}

// procCPU is the CPU time (user + system) process pid has used so far.
func procCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ
	return time.Duration(utime+stime) * time.Second / ticks
}
