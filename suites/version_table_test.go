package suites

import (
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func TestVER01Table(t *testing.T) {
	for _, on := range cvBoth {
		adcp := cvData(on) + "/adcp"
		caps := func(a string) evidence.Call {
			return capsCall(on, `{"adcp":`+a+`,"supported_protocols":["media_buy"]}`)
		}
		// reference/versioning.mdx: major_versions integers; supported_versions
		// release-precision strings ("3.1", "3.2-beta.5"), optional.
		cvTable(t, "VER-01", on, []judgeCase{
			{name: "majors and releases", calls: []evidence.Call{caps(`{"major_versions":[3],"supported_versions":["3.0","3.1","3.2-beta.5"]}`)}, want: Pass},
			{name: "majors only", calls: []evidence.Call{caps(`{"major_versions":[2,3]}`)}, want: Pass},
			{name: "major_versions absent", calls: []evidence.Call{caps(`{"supported_versions":["3.1"]}`)}, want: Fail, ptr: adcp + "/major_versions"},
			{name: "major_versions strings", calls: []evidence.Call{caps(`{"major_versions":["3"]}`)}, want: Fail, ptr: adcp + "/major_versions"},
			{name: "major_versions empty", calls: []evidence.Call{caps(`{"major_versions":[]}`)}, want: Fail, ptr: adcp + "/major_versions"},
			{name: "major_versions zero", calls: []evidence.Call{caps(`{"major_versions":[0]}`)}, want: Fail, ptr: adcp + "/major_versions"},
			{name: "supported_versions at patch precision", calls: []evidence.Call{caps(`{"major_versions":[3],"supported_versions":["3.1.19"]}`)},
				want: Fail, ptr: adcp + "/supported_versions"},
			{name: "supported_versions empty", calls: []evidence.Call{caps(`{"major_versions":[3],"supported_versions":[]}`)},
				want: Fail, ptr: adcp + "/supported_versions"},
			// VER-01: no adcp object at all fails too.
			{name: "no adcp object", calls: []evidence.Call{capsCall(on, `{"supported_protocols":["media_buy"]}`)}, want: Fail, ptr: adcp},
			{name: "adcp not an object", calls: []evidence.Call{caps(`[3]`)}, want: Fail, ptr: adcp},
			{name: "capabilities answered with an error", calls: []evidence.Call{cvErr(on, capabilitiesProbe, "get_adcp_capabilities",
				`{"adcp_error":{"code":"SERVICE_UNAVAILABLE","message":"down"}}`)}, want: Skip, msg: "CAP-01"},
			{name: "not called", want: Skip, msg: "not called"},
			{name: "harness failed", calls: []evidence.Call{harnessFailed(cvID(on, capabilitiesProbe), evidence.Transport(on), evidence.KindToolCall, "EOF")},
				want: HarnessError, msg: "EOF"},
		})
	}
}

func TestVER02Table(t *testing.T) {
	for _, on := range cvBoth {
		ver := func(c evidence.Call) evidence.Call {
			return cvPurposes(c, evidence.PurposeErrorVersion, evidence.PurposeContext)
		}
		major := func(c evidence.Call) evidence.Call {
			return cvPurposes(c, evidence.PurposeErrorMajorVersion, evidence.PurposeContext)
		}
		const vid, mid = "get_products/error_version", "get_products/error_major_version"
		e := cvData(on) + "/adcp_error"
		// error-details/version-unsupported.json: supported_versions, a
		// non-empty list of release-precision strings.
		const unsupported = `{"adcp_error":{"code":"VERSION_UNSUPPORTED","message":"Unsupported release.","recovery":"correctable","field":"adcp_version",` +
			`"details":{"supported_versions":["3.0","3.1"],"supported_majors":[3]}}}`
		cases := []judgeCase{
			{name: "both refused", calls: []evidence.Call{ver(cvErr(on, vid, "get_products", unsupported)), major(cvErr(on, mid, "get_products", unsupported))}, want: Pass},
			{name: "pin served", calls: []evidence.Call{ver(cvOK(on, vid, "get_products", productsBody)), major(cvErr(on, mid, "get_products", unsupported))},
				want: Fail, ptr: "/result", msg: `adcp_version "99.0"`},
			{name: "major version ignored", calls: []evidence.Call{ver(cvErr(on, vid, "get_products", unsupported)), major(cvOK(on, mid, "get_products", productsBody))},
				want: Fail, ptr: "/result", msg: "adcp_major_version 99"},
			{name: "details absent", calls: []evidence.Call{ver(cvErr(on, vid, "get_products", `{"adcp_error":{"code":"VERSION_UNSUPPORTED","message":"no"}}`))},
				want: Fail, ptr: e + "/details/supported_versions"},
			{name: "supported_versions majors", calls: []evidence.Call{ver(cvErr(on, vid, "get_products",
				`{"adcp_error":{"code":"VERSION_UNSUPPORTED","message":"no","details":{"supported_versions":["3"]}}}`))},
				want: Fail, ptr: e + "/details/supported_versions"},
			{name: "another code", calls: []evidence.Call{major(cvErr(on, mid, "get_products", `{"adcp_error":{"code":"INVALID_REQUEST","message":"no"}}`))},
				want: Fail, ptr: e + "/code"},
			{name: "JSON-RPC error without an AdCP error", calls: []evidence.Call{ver(cvRPCErr(on, vid, "get_products", `{"code":-32602,"message":"bad version"}`))},
				want: Fail, ptr: "/error"},
			// Seed 001: a JSON-RPC error may carry the AdCP error in data.
			{name: "JSON-RPC error carrying VERSION_UNSUPPORTED", calls: []evidence.Call{ver(cvRPCErr(on, vid, "get_products",
				`{"code":-32602,"message":"Unsupported release","data":`+unsupported+`}`))}, want: Pass},
			{name: "HTTP 400 without JSON-RPC", calls: []evidence.Call{ver(cvHTTP(on, vid, "get_products", 400, "bad version"))}, want: Fail, msg: "HTTP 400"},
			{name: "no version probe", want: Skip, msg: "no call declaring an unsupported version"},
			{name: "not run", calls: []evidence.Call{notRun(cvID(on, mid), evidence.Transport(on), evidence.KindToolCall, "no read tool", evidence.PurposeErrorMajorVersion)},
				want: Skip, msg: "no read tool"},
			{name: "harness failed", calls: []evidence.Call{ver(cvErr(on, vid, "get_products", unsupported)),
				harnessFailed(cvID(on, mid), evidence.Transport(on), evidence.KindToolCall, "EOF", evidence.PurposeErrorMajorVersion)},
				want: HarnessError, msg: "EOF"},
		}
		if on == catalogue.MCP {
			cases = append(cases, judgeCase{name: "VERSION_UNSUPPORTED in the text item only", calls: []evidence.Call{ver(mcpResult("mcp/"+vid, "get_products",
				`{"content":[{"type":"text","text":`+quoteJSON(unsupported)+`}],"isError":true}`))}, want: Pass})
		}
		cvTable(t, "VER-02", on, cases)
	}
}

func TestVER03Table(t *testing.T) {
	for _, on := range cvBoth {
		verCaps := cvOK(on, "ver/capabilities", "get_adcp_capabilities",
			`{"adcp":{"major_versions":[3],"supported_versions":["3.0","3.1"]},"supported_protocols":["media_buy"]}`, evidence.PurposeDiscovery)
		pin := func(v, echo string) evidence.Call {
			id := "ver/pin/" + v
			if v == "3.99" {
				id = "ver/downshift/" + v
			}
			body := `{"adcp":{"major_versions":[3]},"supported_protocols":["media_buy"]`
			if echo != "" {
				body += `,"adcp_version":"` + echo + `"`
			}
			return cvWith(cvOK(on, id, "get_adcp_capabilities", body+"}", evidence.PurposeVersionPin), `{"adcp_version":"`+v+`"}`)
		}
		echo := cvData(on) + "/adcp_version"
		refused := cvWith(cvErr(on, "ver/downshift/3.99", "get_adcp_capabilities",
			`{"adcp_error":{"code":"VERSION_UNSUPPORTED","message":"no","details":{"supported_versions":["3.0","3.1"]}}}`, evidence.PurposeVersionPin),
			`{"adcp_version":"3.99"}`)
		// reference/versioning.mdx: the pin is echoed when served; a pin the
		// seller does not advertise is served downshifted to the highest
		// release of its major below it, or refused.
		cvTable(t, "VER-03", on, []judgeCase{
			{name: "pins echoed", calls: []evidence.Call{verCaps, pin("3.0", "3.0"), pin("3.1", "3.1")}, want: Pass},
			{name: "downshift echoed", calls: []evidence.Call{verCaps, pin("3.1", "3.1"), pin("3.99", "3.1")}, want: Pass},
			{name: "downshift refused", calls: []evidence.Call{verCaps, pin("3.1", "3.1"), refused}, want: Pass},
			{name: "another release echoed", calls: []evidence.Call{verCaps, pin("3.1", "3.0")}, want: Fail, ptr: echo},
			{name: "echo absent", calls: []evidence.Call{verCaps, pin("3.0", "")}, want: Fail, ptr: echo},
			{name: "downshift echoes the pin", calls: []evidence.Call{verCaps, pin("3.99", "3.99")}, want: Fail, ptr: echo, msg: "downshifted"},
			{name: "advertised pin refused", calls: []evidence.Call{verCaps, cvWith(cvErr(on, "ver/pin/3.1", "get_adcp_capabilities",
				`{"adcp_error":{"code":"VERSION_UNSUPPORTED","message":"no"}}`, evidence.PurposeVersionPin), `{"adcp_version":"3.1"}`)},
				want: Fail, msg: "not served"},
			{name: "advertised pin answered with an HTTP error", calls: []evidence.Call{verCaps,
				cvPurposes(cvWith(cvHTTP(on, "ver/pin/3.1", "get_adcp_capabilities", 400, "bad"), `{"adcp_version":"3.1"}`), evidence.PurposeVersionPin)},
				want: Fail, msg: "HTTP 400"},
			{name: "downshift pin answered with an HTTP error", calls: []evidence.Call{verCaps, pin("3.1", "3.1"),
				cvPurposes(cvWith(cvHTTP(on, "ver/downshift/3.99", "get_adcp_capabilities", 400, "bad"), `{"adcp_version":"3.99"}`), evidence.PurposeVersionPin)},
				want: Pass},
			{name: "no pinned call", calls: []evidence.Call{verCaps}, want: Skip, msg: "no call pinned"},
			{name: "harness failed", calls: []evidence.Call{verCaps, harnessFailed(cvID(on, "ver/pin/3.1"), evidence.Transport(on), evidence.KindToolCall, "EOF", evidence.PurposeVersionPin)},
				want: HarnessError, msg: "EOF"},
		})
	}
}
