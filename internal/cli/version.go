package cli

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
)

// Version and Commit name the build. Release builds (.goreleaser.yaml) set
// them with
//
//	-ldflags "-X github.com/adcp-conform/adcp-conform/internal/cli.Version=1.2.3
//	          -X github.com/adcp-conform/adcp-conform/internal/cli.Commit=<sha>"
//
// A `go install …/cmd/adcp-conform@v1.2.3` build has no ldflags: its
// version is the module's, from the build info (see currentVersion).
var (
	Version = devVersion
	Commit  = ""
)

// devVersion is the version of a build from a checkout.
const devVersion = "0.1.0-dev"

// The protocol versions this build tests.
const (
	// AdcpRelease is the AdCP release whose rules and schemas the run applies.
	AdcpRelease = "3.1.19"
	// MCPProtocolVersion is the MCP protocol version the client pins.
	MCPProtocolVersion = "2025-06-18"
)

// A2AVersions are the A2A protocol versions the client speaks.
var A2AVersions = []string{"0.3", "1.0"}

// VersionInfo is what `adcp-conform version --json` prints.
type VersionInfo struct {
	Tool        string   `json:"tool"`
	Version     string   `json:"version"`
	Commit      string   `json:"commit,omitempty"`
	AdcpRelease string   `json:"adcp_release"`
	MCPProtocol string   `json:"mcp_protocol_version"`
	A2A         []string `json:"a2a_versions"`
	Go          string   `json:"go"`
}

// currentVersion gathers the version facts from the build.
func currentVersion() VersionInfo {
	v := VersionInfo{Tool: "adcp-conform", Version: Version, Commit: Commit, AdcpRelease: AdcpRelease,
		MCPProtocol: MCPProtocolVersion, A2A: A2AVersions}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Go = bi.GoVersion
		v.Version = moduleVersion(v.Version, bi.Main.Version)
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && v.Commit == "" {
				v.Commit = s.Value
			}
		}
	}
	return v
}

// moduleVersion is the version to show: the one ldflags set, else the
// module version `go install …@v1.2.3` records (without its "v"), else the
// development version.
func moduleVersion(set, module string) string {
	if set != devVersion || module == "" || module == "(devel)" {
		return set
	}
	return strings.TrimPrefix(module, "v")
}

func runVersion(args []string, stdio Stdio) error {
	fs := newFlagSet("version", "version [--json]", stdio.Err)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	v := currentVersion()
	if *asJSON {
		enc := json.NewEncoder(stdio.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	fmt.Fprintf(stdio.Out, "adcp-conform %s\n", v.Version)
	if v.Commit != "" {
		fmt.Fprintf(stdio.Out, "commit:        %s\n", v.Commit)
	}
	fmt.Fprintf(stdio.Out, "AdCP release:  %s\n", v.AdcpRelease)
	fmt.Fprintf(stdio.Out, "MCP protocol:  %s\n", v.MCPProtocol)
	fmt.Fprintf(stdio.Out, "A2A versions:  %s\n", strings.Join(v.A2A, ", "))
	fmt.Fprintf(stdio.Out, "built with:    %s\n", v.Go)
	return nil
}
