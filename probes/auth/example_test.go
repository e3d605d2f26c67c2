package auth_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/adcp-conform/adcp-conform/probes/auth"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// A source obtains its token from the endpoint once and shares it; the
// token and the client secret are secrets the run's redactors follow.
func Example() {
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"example-token-1","token_type":"Bearer","expires_in":3600}`)
	}))
	defer idp.Close()
	src, err := auth.New(auth.Config{TokenURL: idp.URL + "/token", ClientID: "conform", ClientSecret: "example-secret",
		Policy: fetch.Policy{Local: true}}) // a loopback endpoint: local development only
	if err != nil {
		fmt.Println(err)
		return
	}
	tok, err := src.Token(context.Background())
	fmt.Println(tok, err, src.Issued(tok))
	red := wire.NewLiveRedactor(nil, src.Secrets(), nil)
	fmt.Println(red.String("the seller echoed example-token-1 and example-secret"))
	// Output:
	// example-token-1 <nil> true
	// the seller echoed [redacted] and [redacted]
}
