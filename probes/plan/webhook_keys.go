package plan

import (
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// SellerKeysFrom returns the seller's webhook-signing keys the HOOK probes
// fetched over transport t (their <t>/hook/jwks call, see sellerKeys), or
// why there are none: the storyboards' webhook steps verify with the same
// keys, fetched once.
func SellerKeysFrom(store *evidence.Store, t evidence.Transport) ([]webhook.JWK, string) {
	jc, ok := store.Call(string(t) + "/hook/jwks")
	if !ok {
		return nil, "the run did not fetch the seller's JWKS (the HOOK probes fetch it when they register an RFC 9421 webhook)"
	}
	return keysOf(jc, jc.URL)
}

// keysOf reads the keys of a JWKS fetch of jwksURI, or says why there are
// none.
func keysOf(jc evidence.Call, jwksURI string) ([]webhook.JWK, string) {
	switch {
	case jc.HarnessError != "":
		return nil, "fetching " + jwksURI + ": " + wire.Sanitize(jc.HarnessError, 200)
	case jc.HTTPStatus != 200 || jc.Body == nil:
		return nil, "no JWKS at " + jwksURI
	}
	keys, err := webhook.ParseJWKS(jc.Body)
	if err != nil {
		return nil, jwksURI + ": " + err.Error()
	}
	return keys, ""
}
