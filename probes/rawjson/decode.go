package rawjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
)

// Decode fills v, a pointer to a struct (or slice, pointer, string, bool,
// number, json.RawMessage or any), from the JSON text raw as a client's
// JSON.parse reads it: object keys match a field's json tag (or name)
// exactly — encoding/json matches them case-insensitively, so a seller's
// "IsError" would fill IsError — and a repeated key's last value counts.
// Members without a field are ignored. A value of the wrong kind leaves its
// field zero and the first such mismatch is returned as the error, after
// every other field is filled (as encoding/json does); invalid JSON fills
// nothing. An any field is decoded by encoding/json.
func Decode(raw []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("rawjson: Decode needs a non-nil pointer")
	}
	if !Valid(raw) {
		_, err := ParseObject(raw)
		if err == nil {
			err = &InputError{Msg: "input is not JSON"}
		}
		return err
	}
	var first error
	decodeInto(Trim(raw), rv.Elem(), "", &first)
	return first
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

func decodeInto(raw []byte, v reflect.Value, at string, first *error) {
	mismatch := func() {
		if *first == nil {
			*first = &InputError{Pointer: at, Msg: "is " + KindOf(raw).Phrase() + ", not " + v.Type().String()}
		}
	}
	if v.Type() == rawMessageType {
		v.SetBytes(append([]byte(nil), raw...))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if KindOf(raw) == KindNull {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		decodeInto(raw, p.Elem(), at, first)
		v.Set(p)
	case reflect.Interface:
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			if *first == nil {
				*first = err
			}
			return
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.Struct:
		if KindOf(raw) != KindObject {
			if KindOf(raw) != KindNull {
				mismatch()
			}
			return
		}
		o := ObjectOf(raw)
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := f.Name
			if tag, ok := f.Tag.Lookup("json"); ok {
				n, _, _ := strings.Cut(tag, ",")
				if n == "-" {
					continue
				}
				if n != "" {
					name = n
				}
			}
			if val, ok := o.Get(name); ok {
				decodeInto(val, v.Field(i), Pointer(at, name), first)
			}
		}
	case reflect.Slice:
		if KindOf(raw) != KindArray {
			if KindOf(raw) != KindNull {
				mismatch()
			}
			return
		}
		s := reflect.MakeSlice(v.Type(), 0, 0)
		Elements(raw, func(i int, e []byte) bool {
			ev := reflect.New(v.Type().Elem()).Elem()
			decodeInto(e, ev, at+"/"+strconv.Itoa(i), first)
			s = reflect.Append(s, ev)
			return true
		})
		v.Set(s)
	case reflect.String:
		s, ok := stringValue(raw)
		if !ok {
			if KindOf(raw) != KindNull {
				mismatch()
			}
			return
		}
		v.SetString(s)
	case reflect.Bool:
		switch KindOf(raw) {
		case KindBool:
			v.SetBool(raw[0] == 't')
		case KindNull:
		default:
			mismatch()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if KindOf(raw) != KindNumber || err != nil || v.OverflowInt(n) {
			if KindOf(raw) != KindNull {
				mismatch()
			}
			return
		}
		v.SetInt(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(string(raw), 64)
		if KindOf(raw) != KindNumber || err != nil {
			if KindOf(raw) != KindNull {
				mismatch()
			}
			return
		}
		v.SetFloat(f)
	default:
		mismatch()
	}
}
