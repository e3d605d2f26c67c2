//go:build adcpmutation

package suites

import (
	"fmt"
	"os"
	"testing"
)

// TestListMutants prints every judge as "RULE transport", one a line, when
// ADCP_CONFORM_LIST_MUTANTS is set: the list .ci/mutants mutates.
func TestListMutants(t *testing.T) {
	if os.Getenv("ADCP_CONFORM_LIST_MUTANTS") == "" {
		t.Skip("set ADCP_CONFORM_LIST_MUTANTS to list the judges")
	}
	for _, c := range Checks() {
		fmt.Printf("MUTANT %s %s\n", c.ID, c.Transport)
	}
}
