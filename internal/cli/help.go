package cli

// runHelp groups run's flags: what is tested, how the run authenticates,
// what it runs, how far it may go, what it writes, and certification.
var runHelp = helpLayout{
	groups: []flagGroup{
		{"Target (none: the bundled reference seller)", []string{"mcp", "a2a", "agent", "sandbox", "targets", "parallel-targets", "shard", "shard-index", "rerun"}},
		{"Credentials", []string{"bearer-env", "header", "oauth-token-url", "oauth-client-id", "oauth-client-secret-env", "oauth-scope",
			"oauth-resource", "oauth-audience", "oauth-client-auth", "live-bearer-env", "agent-bearer-env", "ca-cert"}},
		{"What to run", []string{"label-filter", "storyboard", "release", "storyboards", "schemas", "release-mirror", "allow-mutations",
			"strict", "inputs", "seed", "rate-burst", "allow-domain", "brand-json"}},
		{"Webhooks and tasks", []string{"webhook-listen", "webhook-url", "webhook-wait", "task-wait"}},
		{"Limits", []string{"timeout", "deadline", "parallel", "max-body", "max-event", "max-evidence", "max-total", "allow-local-fetch"}},
		{"Reports", []string{"out", "v", "baseline"}},
		{"Certification", []string{"certify", "sign-key"}},
		{"Profiling", []string{"cpu-profile", "block-profile"}},
	},
	examples: `  # The bundled reference seller, every face: proves the harness, never a seller
  adcp-conform run

  # A staging seller, read-only, the token from the environment
  adcp-conform run --mcp https://staging.seller.example/mcp --bearer-env SELLER_TOKEN --out report/

  # Both faces of one seller, its sandbox, the storyboards that create state too
  adcp-conform run --mcp https://seller.example/mcp --a2a https://seller.example/a2a \
    --bearer-env SELLER_TOKEN --sandbox --allow-mutations

  # One rule, then one storyboard
  adcp-conform run --mcp https://seller.example/mcp --label-filter 'rule:ERR-06'
  adcp-conform run --mcp https://seller.example/mcp --storyboard error_compliance

  # A registry: every seller of a targets file, one folder each and an index; run again, it resumes
  adcp-conform run --targets targets.yaml --out registry/ --parallel-targets 8
  adcp-conform run --targets targets.yaml --out registry/ --shard 2/3   # one shard of three; then merge --targets

  # CI with known failures, signed results
  adcp-conform run --mcp "$SELLER_URL" --bearer-env SELLER_TOKEN --baseline known-failures.yaml --sign-key ci.key
`,
}
