package selftest

import (
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/report"
)

// TestSchemaFaultNamesThePointerAndTheSchema: a product missing a field
// core/product.json requires fails SCHEMA-01 on every face, the message
// naming the product's JSON pointer and the $id of the schema it breaks.
func TestSchemaFaultNamesThePointerAndTheSchema(t *testing.T) {
	if schemasDir == "" {
		t.Skip("../shared/spec/schemas/3.1.19 is absent")
	}
	got, _, err := judged(nil, seller.Fault("SCHEMA-01/product-missing-field"))
	if err != nil {
		t.Fatal(err)
	}
	for _, face := range []string{"mcp", "a2a/1.0", "a2a/0.3"} {
		o := got["SCHEMA-01 "+face]
		if o.Outcome != report.Failed || !strings.Contains(o.Message, "/products/0") ||
			!strings.Contains(o.Message, "/schemas/3.1.19/core/product.json#") || !strings.Contains(o.Message, "reporting_capabilities") {
			t.Errorf("SCHEMA-01 %s: %s %q", face, o.Outcome, o.Message)
		}
	}
}
