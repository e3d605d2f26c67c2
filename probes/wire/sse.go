package wire

import (
	"bytes"
	"io"
	"strconv"
	"unicode/utf8"
)

// Event is one block of a text/event-stream, parsed with the WHATWG rules.
//
// Every block that holds at least one field line is reported, also those a
// browser would not dispatch (no data line, or cut by the end of the stream),
// because they are evidence; Dispatch says whether a WHATWG user agent fires it.
type Event struct {
	// Type is the value of the last "event" field; "" when absent (WHATWG
	// then uses "message").
	Type string `json:"event,omitempty"`
	// Data is the data lines joined with "\n", decoded as UTF-8 with U+FFFD
	// for invalid bytes.
	Data string `json:"data"`
	// ID is the stream's last event ID after this block (ids persist).
	ID string `json:"id,omitempty"`
	// HasID is true when this block itself carried a valid id field.
	HasID bool `json:"has_id,omitempty"`
	// Retry is the reconnection time in ms set by this block, nil when absent.
	Retry *int64 `json:"retry,omitempty"`
	// HasData is true when the block had at least one data line.
	HasData bool `json:"has_data,omitempty"`
	// Dispatch is true when a WHATWG user agent dispatches this event: the
	// block is complete and its data buffer is not empty.
	Dispatch bool `json:"dispatch"`
	// Complete is false for a block cut by the end of the stream.
	Complete bool `json:"complete"`
	// Raw holds the exact bytes of the block: comments, field lines and line
	// terminators up to and including the blank line that ended it.
	Raw Bytes `json:"raw"`
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// sseDecoder is a push parser: Feed it bytes in any chunking, it calls emit
// for each block. It holds at most maxEvent bytes of a block.
type sseDecoder struct {
	maxEvent int
	emit     func(Event) error

	head    []byte // first bytes of the stream, while a BOM is possible
	started bool
	skipLF  bool // the previous byte was CR: a following LF is part of it
	// deferred is set when a blank line ended with a CR at the end of a
	// chunk: the block is dispatched once the next byte shows whether an LF
	// belongs to it.
	deferred bool

	line   []byte
	raw    []byte
	data   []byte
	typ    string
	lastID string
	hasID  bool
	retry  *int64
	fields bool // the block has a non-comment line
	nData  int
	err    error
}

func newSSEDecoder(maxEvent int, emit func(Event) error) *sseDecoder {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventBytes
	}
	return &sseDecoder{maxEvent: maxEvent, emit: emit}
}

// feed parses p. After an error every later call returns the same error.
func (d *sseDecoder) feed(p []byte) error {
	if d.err != nil {
		return d.err
	}
	if !d.started {
		d.head = append(d.head, p...)
		if len(d.head) < len(utf8BOM) && bytes.HasPrefix(utf8BOM, d.head) {
			return nil
		}
		d.started = true
		p = d.head
		d.head = nil
		if bytes.HasPrefix(p, utf8BOM) {
			if err := d.grow(len(utf8BOM)); err != nil {
				return err
			}
			d.raw = append(d.raw, utf8BOM...)
			p = p[len(utf8BOM):]
		}
	}
	if d.deferred && len(p) > 0 {
		d.deferred = false
		d.skipLF = false
		var err error
		if p, err = d.keepLF(p); err != nil {
			return err
		}
		if err := d.dispatch(true); err != nil {
			return err
		}
	}
	for len(p) > 0 {
		if d.skipLF {
			d.skipLF = false
			rest, err := d.keepLF(p)
			if err != nil {
				return err
			}
			if len(rest) < len(p) {
				p = rest
				continue
			}
		}
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			if err := d.grow(len(p)); err != nil {
				return err
			}
			d.line = append(d.line, p...)
			d.raw = append(d.raw, p...)
			return nil
		}
		if err := d.grow(i + 1); err != nil {
			return err
		}
		d.line = append(d.line, p[:i]...)
		d.raw = append(d.raw, p[:i+1]...)
		atEnd := false
		if p[i] == '\r' {
			if i+1 < len(p) && p[i+1] == '\n' {
				if err := d.grow(1); err != nil {
					return err
				}
				d.raw = append(d.raw, '\n')
				i++
			} else {
				d.skipLF = true
				atEnd = i+1 == len(p)
			}
		}
		p = p[i+1:]
		if len(d.line) == 0 && atEnd {
			d.deferred = true
			return nil
		}
		if err := d.endLine(); err != nil {
			return err
		}
	}
	return nil
}

// keepLF takes the LF that completes a CR ending the bytes before p (a CRLF
// split across writes) into the raw event, and returns what follows it; p
// as it is when it does not start with one.
func (d *sseDecoder) keepLF(p []byte) ([]byte, error) {
	if p[0] != '\n' {
		return p, nil
	}
	if err := d.grow(1); err != nil {
		return nil, err
	}
	d.raw = append(d.raw, '\n')
	return p[1:], nil
}

func (d *sseDecoder) grow(n int) error {
	if len(d.raw)+n > d.maxEvent {
		d.err = &LimitError{What: "sse event", Limit: int64(d.maxEvent)}
		return d.err
	}
	return nil
}

func (d *sseDecoder) endLine() error {
	line := d.line
	d.line = d.line[:0]
	if len(line) == 0 {
		return d.dispatch(true)
	}
	d.field(line)
	return nil
}

// field applies one non-blank line to the block being built.
func (d *sseDecoder) field(line []byte) {
	if line[0] == ':' {
		return // comment
	}
	d.fields = true
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "event":
		d.typ = string(value)
	case "data":
		d.data = append(d.data, value...)
		d.data = append(d.data, '\n')
		d.nData++
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			d.lastID = string(value)
			d.hasID = true
		}
	case "retry":
		if len(value) > 0 && allDigits(value) {
			if n, err := strconv.ParseInt(string(value), 10, 64); err == nil {
				d.retry = &n
			}
		}
	}
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// dispatch ends the current block.
func (d *sseDecoder) dispatch(complete bool) error {
	if !d.fields {
		d.reset()
		return nil
	}
	data := d.data
	if len(data) > 0 {
		data = data[:len(data)-1]
	}
	ev := Event{
		Type:     validUTF8(d.typ),
		Data:     validUTF8(string(data)),
		ID:       validUTF8(d.lastID),
		HasID:    d.hasID,
		Retry:    d.retry,
		HasData:  d.nData > 0,
		Dispatch: complete && d.nData > 0,
		Complete: complete,
		Raw:      append(Bytes(nil), d.raw...),
	}
	d.reset()
	if d.emit != nil {
		if err := d.emit(ev); err != nil {
			d.err = err
			return err
		}
	}
	return nil
}

func (d *sseDecoder) reset() {
	d.raw = d.raw[:0]
	d.data = d.data[:0]
	d.typ = ""
	d.hasID = false
	d.retry = nil
	d.fields = false
	d.nData = 0
}

// finish ends the stream: a pending BOM prefix and line are processed and a
// cut block is reported with Complete false.
func (d *sseDecoder) finish() error {
	if d.err != nil {
		return d.err
	}
	if d.deferred {
		d.deferred = false
		if err := d.dispatch(true); err != nil {
			return err
		}
	}
	if !d.started {
		d.started = true
		head := d.head
		d.head = nil
		if len(head) > 0 {
			if err := d.feed(head); err != nil {
				return err
			}
		}
	}
	if len(d.line) > 0 {
		line := d.line
		d.line = d.line[:0]
		d.field(line)
	}
	return d.dispatch(false)
}

// validUTF8 replaces each invalid byte with U+FFFD, as encoding/json does, so
// a stored event reads back identical.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b []byte
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// SSEReader reads events from a text/event-stream with bounded memory.
type SSEReader struct {
	r     io.Reader
	d     *sseDecoder
	queue []Event
	buf   []byte
	err   error
}

// NewSSEReader returns a reader of r's events; an event over maxEventBytes
// (0 means DefaultMaxEventBytes) fails the stream with a *LimitError.
func NewSSEReader(r io.Reader, maxEventBytes int) *SSEReader {
	s := &SSEReader{r: r, buf: make([]byte, 4096)}
	s.d = newSSEDecoder(maxEventBytes, func(ev Event) error {
		s.queue = append(s.queue, ev)
		return nil
	})
	return s
}

// Next returns the next block. Check Event.Dispatch to follow browser
// semantics. At the end of the stream it returns io.EOF; a cut last block is
// returned first, with Complete false.
func (s *SSEReader) Next() (Event, error) {
	for len(s.queue) == 0 {
		if s.err != nil {
			return Event{}, s.err
		}
		n, err := s.r.Read(s.buf)
		if n > 0 {
			if ferr := s.d.feed(s.buf[:n]); ferr != nil {
				s.err = ferr
				continue
			}
		}
		switch {
		case err == io.EOF:
			if ferr := s.d.finish(); ferr != nil {
				s.err = ferr
			} else {
				s.err = io.EOF
			}
		case err != nil:
			s.err = err
		}
	}
	ev := s.queue[0]
	s.queue[0] = Event{}
	s.queue = s.queue[1:]
	return ev, nil
}
