package diagnose

import "strings"

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): its scheme and parameters (names in lower case; a token68
// challenge has its value under ""). An RFC 6750 §3 Bearer challenge
// carries error, error_description, scope, realm, and RFC 9728 §5.1's
// resource_metadata.
type Challenge struct {
	Scheme string            `json:"scheme"`
	Params map[string]string `json:"params,omitempty"`
}

// maxChallenges bounds what is read of a seller's header.
const maxChallenges = 16

// ParseChallenges reads the challenges of the WWW-Authenticate field
// values (RFC 9110 §11.3: challenge = auth-scheme [ 1*SP ( token68 /
// #auth-param ) ], challenges comma-separated). It never fails: what does
// not parse ends the value it is in.
func ParseChallenges(values []string) []Challenge {
	var out []Challenge
	for _, v := range values {
		p := &challengeParser{s: v}
		for len(out) < maxChallenges {
			c, ok := p.next()
			if !ok {
				break
			}
			out = append(out, c)
		}
	}
	return out
}

// Bearer returns the first Bearer challenge (the scheme compared without
// case), or nil.
func Bearer(cs []Challenge) *Challenge {
	for i := range cs {
		if strings.EqualFold(cs[i].Scheme, "Bearer") {
			return &cs[i]
		}
	}
	return nil
}

type challengeParser struct {
	s string
	i int
}

const token68Chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/"

func isTChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func (p *challengeParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// skipSeparators skips whitespace and empty list elements.
func (p *challengeParser) skipSeparators() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func (p *challengeParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string at p.i (the opening quote), unescaping
// quoted-pairs; ok false when it does not close.
func (p *challengeParser) quoted() (string, bool) {
	var b strings.Builder
	for p.i++; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; c {
		case '"':
			p.i++
			return b.String(), true
		case '\\':
			if p.i+1 < len(p.s) {
				p.i++
				b.WriteByte(p.s[p.i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), false
}

// next reads one challenge.
func (p *challengeParser) next() (Challenge, bool) {
	p.skipSeparators()
	scheme := p.token()
	if scheme == "" {
		return Challenge{}, false
	}
	c := Challenge{Scheme: scheme}
	p.skipSpace()
	// token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=",
	// the whole of the challenge: followed by the end or a comma.
	j := p.i
	for j < len(p.s) && strings.IndexByte(token68Chars, p.s[j]) >= 0 {
		j++
	}
	k := j
	for k < len(p.s) && p.s[k] == '=' {
		k++
	}
	if j > p.i {
		end := k
		for end < len(p.s) && (p.s[end] == ' ' || p.s[end] == '\t') {
			end++
		}
		if end == len(p.s) || p.s[end] == ',' {
			c.Params = map[string]string{"": p.s[p.i:k]}
			p.i = end
			return c, true
		}
	}
	for {
		save := p.i
		p.skipSeparators()
		name := p.token()
		p.skipSpace()
		if name == "" || p.i >= len(p.s) || p.s[p.i] != '=' {
			// The next challenge's scheme (or the end).
			p.i = save
			return c, true
		}
		p.i++
		p.skipSpace()
		var value string
		if p.i < len(p.s) && p.s[p.i] == '"' {
			v, ok := p.quoted()
			if !ok {
				p.i = len(p.s)
			}
			value = v
		} else {
			value = p.token()
		}
		if c.Params == nil {
			c.Params = map[string]string{}
		}
		key := strings.ToLower(name)
		if _, dup := c.Params[key]; !dup && len(c.Params) < 32 {
			c.Params[key] = value
		}
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] != ',' {
			// Not a list: the rest does not parse.
			p.i = len(p.s)
			return c, true
		}
	}
}
