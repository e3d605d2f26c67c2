package cli

import (
	"html/template"
	"strings"
)

// indexPage is index.html: one row per target, linking to its report.html.
// html/template escapes every value for its context; links are relative
// folder paths, and a value that is not a safe URL becomes "#ZgotmplZ".
var indexPage = template.Must(template.New("index").Funcs(template.FuncMap{
	"report": func(dir string) string { return strings.TrimSuffix(dir, "/") + "/" + FileHTML },
	"join":   func(s []string) string { return strings.Join(s, " ") },
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>adcp-conform: {{len .Targets}} targets</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.4em .6em;text-align:left;vertical-align:top}
td.v-conformant{color:#176f2c;font-weight:600}
td.v-non_conformant,td.v-stale_baseline{color:#b3261e;font-weight:600}
td.v-error,td.v-incomplete,td.v-missing{color:#8a5a00;font-weight:600}
code{font-size:12px;word-break:break-all}
.reference{color:#8a5a00;font-weight:normal}
</style>
</head>
<body>
<h1>adcp-conform: {{len .Targets}} targets</h1>
<p>{{range $v, $n := .Counts}}{{$n}} {{$v}} · {{end}}generated {{.GeneratedAt.Format "2006-01-02 15:04:05 UTC"}} by adcp-conform {{.Version}}</p>
<table>
<thead><tr><th>target</th><th>verdict</th><th>passed</th><th>failed</th><th>failed rules / harness error</th><th>endpoint</th></tr></thead>
<tbody>
{{range .Targets}}<tr>
<td>{{if eq .Verdict "missing"}}{{.Name}}{{else}}<a href="{{report .Dir}}">{{.Name}}</a>{{end}}</td>
<td class="v-{{.Verdict}}">{{.Verdict}}{{if eq .TargetKind "bundled_reference"}} <span class="reference">(bundled reference seller, not a seller under test)</span>{{end}}</td>
<td>{{.Counts.Of "passed"}}</td>
<td>{{.Counts.Of "failed"}}</td>
<td>{{join .Failed}}{{if .Harness}} {{.Harness}}{{end}}{{if .Error}} {{.Error}}{{end}}</td>
<td><code>{{.Target}}</code></td>
</tr>
{{end}}</tbody>
</table>
</body>
</html>
`))
