package conform

import (
	"runtime/debug"
	"strings"
)

// The protocol versions this build tests.
const (
	// AdcpRelease is the AdCP release whose rules the run applies.
	AdcpRelease = "3.1.19"
	// MCPProtocolVersion is the MCP protocol version the client pins.
	MCPProtocolVersion = "2025-06-18"
)

// modulePath is this module's path, as the build info records it.
const modulePath = "github.com/adcp-conform/adcp-conform"

// devVersion is the version of a build from a checkout.
const devVersion = "0.1.0-dev"

// moduleVersion is the version of this module in the running binary: the
// main module's when it is this one, the dependency's when a seller's
// tests import it, else the development version.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return devVersion
	}
	v := bi.Main.Version
	if bi.Main.Path != modulePath {
		v = ""
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				v = d.Version
			}
		}
	}
	if v == "" || v == "(devel)" {
		return devVersion
	}
	return strings.TrimPrefix(v, "v")
}
