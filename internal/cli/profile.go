package cli

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiles are run's --cpu-profile and --block-profile: where a run's time
// goes, read with `go tool pprof` (docs/performance.md keeps a run's).
type profiles struct {
	cpu, block string
}

// start begins the CPU profile and the recording of blocking events; the
// function it returns writes them. A profile that cannot be written is a
// usage error before the run starts, or a note after it ends.
func (p profiles) start(stdio Stdio) (func(), error) {
	var cpu *os.File
	if p.cpu != "" {
		f, err := os.Create(p.cpu)
		if err != nil {
			return nil, usagef("--cpu-profile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, usagef("--cpu-profile: %v", err)
		}
		cpu = f
	}
	if p.block != "" {
		runtime.SetBlockProfileRate(1) // every blocking event: a run's waits are what it is read for
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				fmt.Fprintf(stdio.Err, "adcp-conform: --cpu-profile: %v\n", err)
			}
		}
		if p.block != "" {
			runtime.SetBlockProfileRate(0)
			if err := writeProfile("block", p.block); err != nil {
				fmt.Fprintf(stdio.Err, "adcp-conform: --block-profile: %v\n", err)
			}
		}
	}, nil
}

func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
