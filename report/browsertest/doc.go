// Package browsertest holds the test that opens report.html in headless
// Chromium: the page renders, its filters work, and hostile seller strings
// stay text. It has no code of its own; see browser_test.go.
//
// The test looks for a browser in $ADCP_CONFORM_CHROMIUM, then on the PATH
// (chromium, chromium-browser, google-chrome, google-chrome-stable). It skips
// when none is found, except when $CI is set, where it fails: .ci/run
// installs Debian's chromium package. The screenshot of the page goes to
// testdata/out/ (ignored by git); `go test -v` prints its path.
package browsertest
