package selftest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/shared"
)

// release32 is the AdCP 3.2.0-beta.5 run: ../shared's compliance and
// schema folders of the beta ("" when absent), the reference seller in 3.2
// mode (it lists, and serves by default, 3.2-beta.5).
var release32 = func() sbRelease {
	r := sbRelease{serves: seller.Release32}
	for dst, rel := range map[*string]string{&r.compliance: "compliance", &r.schemas: "schemas"} {
		dir := filepath.Join(shared.Root(), "spec", rel, "3.2.0-beta.5")
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			*dst = dir
		}
	}
	return r
}()

// TestTheReferenceSellerIn32ModeRunsThe32Storyboards: the 3.2.0-beta.5
// storyboards, run on the MCP face of the reference seller in 3.2 mode as
// a production deployment and as a sandbox, fail exactly the steps the
// seller's ledger lists for the release (fixtures/seller/ledger.yaml; none
// of the protocol rules fails); testdata/storyboards32.golden
// and storyboards32_sandbox.golden hold every storyboard's outcome.
func TestTheReferenceSellerIn32ModeRunsThe32Storyboards(t *testing.T) {
	if release32.compliance == "" || release32.schemas == "" {
		t.Skip("../shared/spec/compliance/3.2.0-beta.5 or ../shared/spec/schemas/3.2.0-beta.5 is absent: the 3.2 storyboards cannot run")
	}
	for _, sandbox := range []bool{false, true} {
		golden := "testdata/storyboards32.golden"
		if sandbox {
			golden = "testdata/storyboards32_sandbox.golden"
		}
		t.Run(fmt.Sprintf("sandbox=%v", sandbox), func(t *testing.T) {
			r, err := runRelease(release32, sandbox)
			if err != nil {
				t.Fatal(err)
			}
			holdStoryboards(t, r, ledgerFailures("3.2.0-beta.5", sandbox), golden)
		})
	}
}
