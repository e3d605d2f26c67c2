package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/adcp-conform/adcp-conform/suites/conform"
)

// The worked examples of docs/many-sellers.md, checked without a cluster
// or a runner: each object against its published schema, and each
// adcp-conform command line they hold parsed as the command line does.

var updateExampleSchemas = flag.Bool("update-example-schemas", false,
	"rebuild testdata/examples/kubernetes-"+k8sVersion+"-strict.json from the k8s.io/kubernetes module's OpenAPI v3 spec (go mod download k8s.io/kubernetes@"+k8sVersion+" first)")

// k8sVersion is the Kubernetes release whose OpenAPI schema the
// Kubernetes example is validated against.
const k8sVersion = "v1.37.2"

var (
	exampleK8s     = filepath.Join("..", "..", "docs", "examples", "kubernetes-indexed-job.yaml")
	exampleActions = filepath.Join("..", "..", "docs", "examples", "github-actions-matrix.yml")
	k8sSchemaFile  = filepath.Join("testdata", "examples", "kubernetes-"+k8sVersion+"-strict.json")
	// github-workflow.json is SchemaStore's (testdata/examples/README.md).
	workflowSchemaFile = filepath.Join("testdata", "examples", "github-workflow.json")
)

// The kinds the Kubernetes example uses, by apiVersion and kind.
var k8sKinds = map[string]string{
	"batch/v1 Job":             "io.k8s.api.batch.v1.Job",
	"v1 ConfigMap":             "io.k8s.api.core.v1.ConfigMap",
	"v1 Secret":                "io.k8s.api.core.v1.Secret",
	"v1 PersistentVolumeClaim": "io.k8s.api.core.v1.PersistentVolumeClaim",
}

// Every object of the Kubernetes example is valid against the Kubernetes
// OpenAPI schema, unknown fields refused; each completion index's
// arguments are a --targets run of its own shard of the ConfigMap's
// targets file, every shard run by some index; every bearer_env is a key
// of the Secret; the merge Job's arguments merge that file's folders.
func TestTheKubernetesExampleIsValid(t *testing.T) {
	if *updateExampleSchemas {
		buildK8sSchema(t)
	}
	sch := compileSchemas(t, k8sSchemaFile)
	b, err := os.ReadFile(exampleK8s)
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := sch.k8sObjects(string(b))
	for _, err := range errs {
		t.Error(err)
	}
	var targetsYAML string
	var secretKeys []string
	var jobs []map[string]any
	for _, obj := range objs {
		switch obj["kind"] {
		case "ConfigMap":
			targetsYAML, _ = dig(obj, "data", "targets.yaml").(string)
		case "Secret":
			for k := range dig(obj, "stringData").(map[string]any) {
				secretKeys = append(secretKeys, k)
			}
		case "Job":
			jobs = append(jobs, obj)
		}
	}
	if targetsYAML == "" || len(jobs) != 2 {
		t.Fatalf("want a ConfigMap with targets.yaml and two Jobs; got %d Jobs", len(jobs))
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.yaml")
	if err := os.WriteFile(file, []byte(targetsYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	targets, err := LoadTargets(file)
	if err != nil {
		t.Fatalf("the ConfigMap's targets.yaml: %v", err)
	}
	env := map[string]string{}
	for _, k := range secretKeys {
		env[k] = "example-token-" + k
	}
	for _, tg := range targets {
		if _, ok := env[tg.BearerEnv]; !ok {
			t.Errorf("target %s: bearer_env %s is no key of the Secret", tg.Name, tg.BearerEnv)
		}
	}
	paths := strings.NewReplacer("/config/targets.yaml", file, "/results", filepath.Join(dir, "results"))
	// The targets Job: index I of completions runs --shard-index I/N, and
	// the shards together hold every target once.
	job := jobs[0]
	completions := int(dig(job, "spec", "completions").(float64))
	held := map[string]int{}
	for i := range completions {
		args := containerArgs(t, job, paths, strconv.Itoa(i))
		opts := parseTargetsRun(t, args, env)
		if opts.Shard.Count != completions {
			t.Errorf("index %d: shard %s, but the Job has %d completions", i, opts.Shard, completions)
		}
		for _, tg := range targets {
			if opts.Shard.Holds(tg.Out) {
				held[tg.Out]++
			}
		}
	}
	for _, tg := range targets {
		if held[tg.Out] != 1 {
			t.Errorf("target %s is run by %d indexes", tg.Name, held[tg.Out])
		}
	}
	// The merge Job: a merge of the targets file's folders, which the
	// command line takes (it writes an index of missing folders here).
	args := containerArgs(t, jobs[1], paths, "")
	if args[0] != "merge" || !slices.Contains(args, file) {
		t.Errorf("the merge Job's arguments: %q", args)
	}
	if err := os.MkdirAll(filepath.Join(dir, "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, env, "", args...); code == ExitUsage {
		t.Errorf("%q: exit %d: %s", args, code, errOut)
	}
}

// The Actions example is a valid workflow (SchemaStore's schema), and its
// run step, for each shard of its matrix, is a --targets run of that
// shard: the shards 1 … N, N the job total.
func TestTheActionsExampleIsValid(t *testing.T) {
	sch := compileSchemas(t, workflowSchemaFile)
	b, err := os.ReadFile(exampleActions)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := sch.workflow(string(b))
	if err != nil {
		t.Fatalf("the workflow: %v", err)
	}
	job := dig(wf, "jobs", "conform").(map[string]any)
	shards := dig(job, "strategy", "matrix", "shard").([]any)
	var line string
	for _, s := range dig(job, "steps").([]any) {
		if r, _ := s.(map[string]any)["run"].(string); strings.HasPrefix(r, "adcp-conform run ") {
			line = r
		}
	}
	if line == "" {
		t.Fatal("no `adcp-conform run` step")
	}
	env := map[string]string{}
	for _, s := range dig(job, "steps").([]any) {
		if e, ok := s.(map[string]any)["env"].(map[string]any); ok {
			for k := range e {
				env[k] = "example-token-" + k
			}
		}
	}
	for i, s := range shards {
		expanded := strings.NewReplacer("${{ matrix.shard }}", fmt.Sprint(s), "${{ strategy.job-total }}", strconv.Itoa(len(shards))).Replace(line)
		opts := parseTargetsRun(t, strings.Fields(expanded)[1:], env)
		if want := (conform.Shard{Part: i + 1, Count: len(shards)}); opts.Shard != want {
			t.Errorf("matrix shard %v: %s, want %s", s, opts.Shard, want)
		}
	}
	// A re-run resumes: the shard's results/ is restored from an earlier
	// attempt of the same run and saved by every attempt, whatever became
	// of it, under a key of its own.
	var restore, save map[string]any
	for _, s := range dig(job, "steps").([]any) {
		step := s.(map[string]any)
		switch step["uses"] {
		case "actions/cache/restore@v4":
			restore = step
		case "actions/cache/save@v4":
			save = step
		}
	}
	const attemptKey = "conform-${{ github.run_id }}-shard-${{ matrix.shard }}-${{ github.run_attempt }}"
	switch {
	case restore == nil || save == nil:
		t.Error("the conform job neither restores nor saves results/ across attempts")
	case dig(restore, "with", "path") != "results" || dig(save, "with", "path") != "results":
		t.Error("the cache steps do not keep results/, the run's --out")
	case dig(save, "if") != "always()":
		t.Error("an attempt that times out or is cancelled saves nothing")
	case dig(save, "with", "key") != attemptKey || dig(restore, "with", "key") != attemptKey:
		t.Errorf("the cache key is not the attempt's: %v", dig(save, "with", "key"))
	case !strings.HasPrefix(attemptKey, fmt.Sprint(dig(restore, "with", "restore-keys"))):
		t.Errorf("the restore does not fall back to an earlier attempt: %v", dig(restore, "with", "restore-keys"))
	}
	merge := dig(wf, "jobs", "index", "steps").([]any)
	var merged bool
	for _, s := range merge {
		if r, _ := s.(map[string]any)["run"].(string); strings.HasPrefix(r, "adcp-conform merge --targets registry/targets.yaml") {
			merged = true
		}
	}
	if !merged {
		t.Error("the index job merges no --targets file")
	}
}

// The schemas the examples are checked against catch what they must: an
// unknown field, a value of the wrong type, a required field left out.
func TestTheExampleSchemasRefuseBrokenExamples(t *testing.T) {
	k8s, wf := compileSchemas(t, k8sSchemaFile), compileSchemas(t, workflowSchemaFile)
	k8sDoc, err := os.ReadFile(exampleK8s)
	if err != nil {
		t.Fatal(err)
	}
	wfDoc, err := os.ReadFile(exampleActions)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ doc, old, new, says string }{
		{string(k8sDoc), "completionMode: Indexed", "completionMod: Indexed", "completionMod"},
		{string(k8sDoc), "completions: 3", `completions: "3"`, "completions"},
		{string(k8sDoc), "- name: run\n", "- tty: false\n", "name"},
		{string(k8sDoc), "mountPath: /config, readOnly: true", "mountPath: /config, readonly: true", "readonly"},
		{string(wfDoc), "    runs-on: ubuntu-latest\n    timeout", "    run-on: ubuntu-latest\n    timeout", "run-on"},
		{string(wfDoc), "fail-fast: false", "fail-fast: [false]", "fail-fast"},
		{string(wfDoc), "      - name: run\n        # A non-conformant", "      - nam: run\n        # A non-conformant", "nam"},
	} {
		if !strings.Contains(tc.doc, tc.old) {
			t.Fatalf("the example no longer holds %q", tc.old)
		}
		broken := strings.Replace(tc.doc, tc.old, tc.new, 1)
		var got string
		if tc.doc == string(k8sDoc) {
			_, errs := k8s.k8sObjects(broken)
			got = fmt.Sprint(errs)
		} else if _, err := wf.workflow(broken); err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.says) {
			t.Errorf("%q → %q: %q, want an error naming %q", tc.old, tc.new, got, tc.says)
		}
	}
}

// k8sObjects decodes the YAML documents of a Kubernetes manifest and
// validates each against the schema of its kind.
func (s *exampleSchemas) k8sObjects(text string) ([]map[string]any, []error) {
	var objs []map[string]any
	var errs []error
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			errs = append(errs, fmt.Errorf("document %d: %v", i+1, err))
			continue
		}
		gvk := fmt.Sprintf("%v %v", obj["apiVersion"], obj["kind"])
		def, ok := k8sKinds[gvk]
		if !ok {
			errs = append(errs, fmt.Errorf("document %d: %s: not a kind this test knows (add it to k8sKinds and rebuild the schema)", i+1, gvk))
			continue
		}
		if err := s.validate(def, obj); err != nil {
			errs = append(errs, fmt.Errorf("document %d (%s %v): %v", i+1, gvk, dig(obj, "metadata", "name"), err))
		}
		objs = append(objs, obj)
	}
	return objs, errs
}

// workflow decodes a GitHub workflow as GitHub does (YAML 1.2: `on` is a
// key, not true) and validates it.
func (s *exampleSchemas) workflow(text string) (map[string]any, error) {
	var raw map[string]any
	if err := yamlv3.Unmarshal([]byte(text), &raw); err != nil {
		return nil, err
	}
	var wf map[string]any
	j, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(j, &wf)
	}
	if err != nil {
		return nil, err
	}
	return wf, s.validate("", wf)
}

// parseTargetsRun parses `run` args as the command line does, through the
// run's configuration and its --targets options, and returns those.
func parseTargetsRun(t *testing.T, args []string, env map[string]string) conform.TargetsOptions {
	t.Helper()
	stdio := Stdio{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: func(k string) string { return env[k] }}
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("%q is no `run`", args)
	}
	c, err := parseRun(args[1:], stdio)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	if c.tune.targets == "" {
		t.Fatalf("%q: no --targets", args)
	}
	if _, err := c.config(stdio); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	opts, err := c.tune.targetsOptions(c.out)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return opts
}

// containerArgs are the Job's one container's args, paths replaced, with
// $(JOB_COMPLETION_INDEX) as Kubernetes expands it for index.
func containerArgs(t *testing.T, job map[string]any, paths *strings.Replacer, index string) []string {
	t.Helper()
	cs := dig(job, "spec", "template", "spec", "containers").([]any)
	if len(cs) != 1 {
		t.Fatalf("%d containers", len(cs))
	}
	var args []string
	for _, a := range cs[0].(map[string]any)["args"].([]any) {
		args = append(args, strings.ReplaceAll(paths.Replace(a.(string)), "$(JOB_COMPLETION_INDEX)", index))
	}
	return args
}

// dig follows keys through nested objects; nil when one is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

type exampleSchemas struct {
	c    *jsonschema.Compiler
	file string
}

// compileSchemas loads the schema document file.
func compileSchemas(t *testing.T, file string) *exampleSchemas {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	url := "file:///" + filepath.Base(file)
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	return &exampleSchemas{c: c, file: url}
}

// validate validates v (decoded JSON) against the schema def of the
// document's components ("": the document itself).
func (s *exampleSchemas) validate(def string, v any) error {
	loc := s.file
	if def != "" {
		loc += "#/components/schemas/" + strings.ReplaceAll(def, "/", "~1")
	}
	sch, err := s.c.Compile(loc)
	if err != nil {
		return err
	}
	// Numbers as the schema library wants them: through its own decoder.
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// buildK8sSchema writes k8sSchemaFile: the schemas of k8sKinds and every
// schema they reach, from the Kubernetes OpenAPI v3 spec (the batch/v1 and
// core v1 documents of the k8s.io/kubernetes module), descriptions dropped,
// and every object with properties closed to others
// (additionalProperties: false), as `kubectl apply --validate=strict`
// refuses an unknown field.
func buildK8sSchema(t *testing.T) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@"+k8sVersion, "api", "openapi-spec", "v3")
	all := map[string]any{}
	for _, name := range []string{"api__v1_openapi.json", "apis__batch__v1_openapi.json"} {
		b, err := os.ReadFile(filepath.Join(spec, name))
		if err != nil {
			t.Fatalf("%v (go mod download k8s.io/kubernetes@%s)", err, k8sVersion)
		}
		var doc struct {
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for k, v := range doc.Components.Schemas {
			all[k] = v
		}
	}
	keep := map[string]any{}
	var reach func(v any)
	reach = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if _, done := keep[name]; !done {
					def, ok := all[name]
					if !ok {
						t.Fatalf("%s: no such schema", ref)
					}
					keep[name] = def
					reach(def)
				}
			}
			for _, e := range v {
				reach(e)
			}
		case []any:
			for _, e := range v {
				reach(e)
			}
		}
	}
	for _, name := range k8sKinds {
		reach(map[string]any{"$ref": "#/components/schemas/" + name})
	}
	var strict func(v any)
	strict = func(v any) {
		sch, ok := v.(map[string]any)
		if !ok {
			return
		}
		delete(sch, "description")
		if props, ok := sch["properties"].(map[string]any); ok {
			for _, p := range props {
				strict(p)
			}
			if _, extra := sch["additionalProperties"]; !extra && sch["x-kubernetes-preserve-unknown-fields"] != true {
				sch["additionalProperties"] = false
			}
		}
		for _, k := range []string{"items", "additionalProperties", "not"} {
			strict(sch[k])
		}
		for _, k := range []string{"allOf", "oneOf", "anyOf"} {
			list, _ := sch[k].([]any)
			for _, e := range list {
				strict(e)
			}
		}
	}
	for _, def := range keep {
		strict(def)
	}
	doc := map[string]any{
		"$comment": fmt.Sprintf("The schemas of %s and every schema they reach, from the Kubernetes %s OpenAPI v3 spec "+
			"(api/openapi-spec/v3 of the k8s.io/kubernetes module, Apache-2.0), descriptions dropped, objects closed to unknown fields. "+
			"Rebuilt by: go mod download k8s.io/kubernetes@%s && go test ./internal/cli/ -run TestTheKubernetesExampleIsValid -update-example-schemas",
			strings.Join(slices.Sorted(func(yield func(string) bool) {
				for _, v := range k8sKinds {
					if !yield(v) {
						return
					}
				}
			}), ", "), k8sVersion, k8sVersion),
		"components": map[string]any{"schemas": keep},
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(k8sSchemaFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k8sSchemaFile, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d schemas", k8sSchemaFile, len(keep))
}
