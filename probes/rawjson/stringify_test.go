package rawjson

import "testing"

// TestStringifyLen pins JSON.stringify(JSON.parse(x)) lengths (UTF-8 bytes);
// the expected values were checked against Node.js.
func TestStringifyLen(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{`1.0`, 1}, {`100`, 3}, {`1e21`, 5}, {`1e20`, 21}, {`0.000001`, 8}, {`1e-7`, 4},
		{`-1.5`, 4}, {`123456789012345678901234`, 22}, {`-0`, 1}, {`1E2`, 3}, {`0.1`, 3},
		{`5e-324`, 6}, {`1.7976931348623157e308`, 23}, {`1e400`, 4}, {`123e-20`, 8}, {`0.0000012345`, 12},
		{`"a\/b"`, 5}, {`"\u0000"`, 8}, {`"\u001f\n"`, 10}, {`"\ud83d\ude00"`, 6}, {`"\ud800"`, 8}, {`"é"`, 4},
		{`"\u2028"`, 5}, {`"\""`, 4},
		{`[]`, 2}, {`[1, 2 ,3]`, 7}, {`{}`, 2}, {`{"a":1,"b":[true,false,null]}`, 29},
		{`{"a":1,"a":{"b":2}}`, 13}, {`{"a":{"x":1},"a":2}`, 7},
		{"\"\xff\"", 5}, // invalid UTF-8 reads as U+FFFD
	}
	for _, c := range cases {
		if got := stringifyLen(Trim([]byte(c.in))); got != c.want {
			t.Errorf("stringifyLen(%s) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestStringifyUnits pins JSON.stringify(JSON.parse(x)).length (UTF-16
// code units), the measure of validate()'s 4096 limit.
func TestStringifyUnits(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{`1e21`, 5}, {`"a\/b"`, 5}, {`"\u0000"`, 8}, {`"\ud83d\ude00"`, 4}, {`"😀"`, 4}, {`"\ud800"`, 8},
		{`"é"`, 3}, {`"\u00e9"`, 3}, {`"\u2028"`, 3}, {`{"é":"日本"}`, 10}, {"\"\xff\"", 3},
		{`{"a":"x","a":"é"}`, 9},
	}
	for _, c := range cases {
		if got := stringifyUnits(Trim([]byte(c.in))); got != c.want {
			t.Errorf("stringifyUnits(%s) = %d, want %d", c.in, got, c.want)
		}
		if got, err := StringifyUnits([]byte(c.in)); err != nil || got != c.want {
			t.Errorf("StringifyUnits(%s) = %d, %v, want %d", c.in, got, err, c.want)
		}
	}
}
