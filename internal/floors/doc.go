// Package floors holds, as a test, the imports the lower floors of the
// house may make (the Kubernetes .import-restrictions idea): the raw-JSON
// foundation imports nothing of the harness, release material only the
// guarded fetch, and the wire layer and the extractors only the raw-JSON
// foundation. It has no code of its own.
package floors
