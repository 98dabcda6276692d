package document

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// A page's text layer, read with ledongthuc/pdf's content interpreter but
// decoded here: the library reads a font's ToUnicode map with each range
// adding to the last byte of its target only, so the identity map
// <0000> <FFFF> <0000> that fpdf, tFPDF and others write for a TrueType
// font turns every character past U+00FF into another (Greek φ came out as
// "¦", Polish ę as nothing), and it looks each code up by scanning every
// entry. Here a range adds to its target's last UTF-16 unit (as poppler and
// pdf.js read it), and single codes are a map lookup.

// textDecoder turns a shown string's codes into text.
type textDecoder interface{ Decode(raw string) string }

// rawCodes shows codes as they are, for a font that cannot be read.
type rawCodes struct{}

func (rawCodes) Decode(raw string) string { return raw }

// pageText is the text the page's content stream shows, in stream order:
// a line break at each text object (BT), at T* and where a move (Td, TD,
// Tm) goes to another line; a space where a move stays on the line or a
// TJ array's gap is wider than a space's (spaceGap) — TeX and others set
// words apart that way, without space characters. A content stream the
// interpreter cannot read is an error.
func pageText(p pdf.Page) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("%v", r)
		}
	}()
	if p.V.IsNull() || p.V.Key("Contents").Kind() == pdf.Null {
		return "", nil
	}
	fonts := map[string]textDecoder{}
	var dec textDecoder = rawCodes{}
	var t textOut
	pdf.Interpret(p.V.Key("Contents"), func(stk *pdf.Stack, op string) {
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "BT", "T*", "'", "\"":
			t.sep('\n')
			if op == "BT" {
				t.y = 0
			}
		case "Td", "TD":
			if len(args) == 2 {
				t.moveTo(t.y + args[1].Float64())
			}
		case "Tm":
			if len(args) == 6 {
				t.moveTo(args[5].Float64())
			}
		case "Tf":
			if len(args) != 2 {
				panic("bad Tf operator")
			}
			name := args[0].Name()
			if _, ok := fonts[name]; !ok {
				fonts[name] = fontDecoder(p.Font(name))
			}
			dec = fonts[name]
		}
		switch op {
		case "Tj", "'", "\"":
			if len(args) == 0 {
				panic("bad " + op + " operator")
			}
			t.WriteString(dec.Decode(args[len(args)-1].RawString()))
		case "TJ":
			if len(args) != 1 {
				panic("bad TJ operator")
			}
			for i := 0; i < args[0].Len(); i++ {
				switch x := args[0].Index(i); x.Kind() {
				case pdf.String:
					t.WriteString(dec.Decode(x.RawString()))
				case pdf.Integer, pdf.Real:
					if x.Float64() <= spaceGap {
						t.sep(' ')
					}
				}
			}
		}
	})
	return t.String(), nil
}

// spaceGap is the TJ adjustment (thousandths of the font size, negative
// to the right) from which a gap is a space: a space is 250 to 333 wide in
// most fonts, kerning a few dozen.
const spaceGap = -180

// textOut is a page's text as it is shown.
type textOut struct {
	b []byte
	y float64 // the line's y in text space (Td, TD and Tm set it)
}

func (t *textOut) WriteString(s string) { t.b = append(t.b, s...) }
func (t *textOut) String() string       { return string(t.b) }

// sep ends a word (' ') or a line ('\n'), once: nothing at the start or
// after white space (a space before a line break becomes the break).
func (t *textOut) sep(c byte) {
	n := len(t.b)
	switch {
	case n == 0 || t.b[n-1] == '\n':
	case t.b[n-1] == ' ':
		if c == '\n' {
			t.b[n-1] = '\n'
		}
	default:
		t.b = append(t.b, c)
	}
}

// moveTo goes to the line at y: another line, or along this one.
func (t *textOut) moveTo(y float64) {
	if y != t.y {
		t.sep('\n')
	} else {
		t.sep(' ')
	}
	t.y = y
}

// fontDecoder is the font's ToUnicode map when it has one that reads,
// else the library's decoder of its encoding.
func fontDecoder(f pdf.Font) textDecoder {
	if tu := f.V.Key("ToUnicode"); tu.Kind() == pdf.Stream {
		if m := readToUnicode(tu); m != nil {
			return m
		}
	}
	enc := f.Encoder()
	if enc == nil {
		return rawCodes{}
	}
	return enc
}

// toUnicode is a ToUnicode CMap: the code space (by code length), codes
// mapped one by one, and ranges.
type toUnicode struct {
	space  [4][][2]uint32 // [len-1]: lo, hi
	chars  map[uint64]string
	ranges []codeRange // by n, then lo
	width  int         // the codes' length without a code space (1 if they differ)
}

// codeRange maps codes lo..hi of n bytes to dst (UTF-16 units, the last
// counting up) or to one string each (list).
type codeRange struct {
	n      int
	lo, hi uint32
	dst    []uint16
	list   []string
}

func codeKey(n int, code uint32) uint64 { return uint64(n)<<32 | uint64(code) }

// codeOf is s's bytes as a big-endian number (s has 1 to 4 bytes).
func codeOf(s string) uint32 {
	var c uint32
	for i := 0; i < len(s); i++ {
		c = c<<8 | uint32(s[i])
	}
	return c
}

// maxCMap bounds the bytes of a ToUnicode map read (the largest real ones,
// of CJK fonts, are a few hundred KB).
const maxCMap = 4 << 20

// readToUnicode reads a ToUnicode CMap stream; nil if it maps nothing.
// It reads the map's sections itself (cmapTokens): the library's
// PostScript interpreter would need a dictionary for findresource that it
// lets no one else make.
func readToUnicode(strm pdf.Value) (m *toUnicode) {
	defer func() {
		if recover() != nil {
			m = nil
		}
	}()
	rc := strm.Reader()
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxCMap))
	if err != nil {
		return nil
	}
	m = &toUnicode{chars: map[uint64]string{}}
	m.read(data)
	if len(m.chars) == 0 && len(m.ranges) == 0 {
		return nil
	}
	return m
}

// read adds the code spaces, codes and ranges of a CMap's text.
func (m *toUnicode) read(data []byte) {
	var operands []cmapToken
	for _, t := range cmapTokens(data) {
		switch t.word {
		case "":
			operands = append(operands, t)
			continue
		case "endcodespacerange":
			m.spaces(operands)
		case "endbfchar":
			m.bfchars(operands)
		case "endbfrange":
			m.bfranges(operands)
		}
		operands = operands[:0]
	}
	slices.SortStableFunc(m.ranges, func(a, b codeRange) int {
		return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.lo, b.lo))
	})
	m.width = 0
	for _, r := range m.ranges {
		m.width = sameWidth(m.width, r.n)
	}
	for k := range m.chars {
		m.width = sameWidth(m.width, int(k>>32))
	}
}

// sameWidth is the codes' common length so far, with one of n bytes more
// (1 once they differ; 0 for none yet).
func sameWidth(w, n int) int {
	if w == 0 || w == n {
		return n
	}
	return 1
}

func (m *toUnicode) spaces(ops []cmapToken) {
	for i := 0; i+1 < len(ops); i += 2 {
		lo, hi := ops[i].str, ops[i+1].str
		if n := len(lo); n >= 1 && n <= 4 && len(hi) == n {
			m.space[n-1] = append(m.space[n-1], [2]uint32{codeOf(lo), codeOf(hi)})
		}
	}
}

func (m *toUnicode) bfchars(ops []cmapToken) {
	for i := 0; i+1 < len(ops); i += 2 {
		if n := len(ops[i].str); n >= 1 && n <= 4 && ops[i+1].str != "" {
			m.chars[codeKey(n, codeOf(ops[i].str))] = utf16Text(units(ops[i+1].str))
		}
	}
}

func (m *toUnicode) bfranges(ops []cmapToken) {
	for i := 0; i+2 < len(ops); i += 3 {
		lo, hi, dst := ops[i].str, ops[i+1].str, ops[i+2]
		n := len(lo)
		if n < 1 || n > 4 || len(hi) != n || codeOf(hi) < codeOf(lo) {
			continue
		}
		r := codeRange{n: n, lo: codeOf(lo), hi: codeOf(hi)}
		if dst.list != nil {
			for _, s := range dst.list {
				r.list = append(r.list, utf16Text(units(s)))
			}
		} else if dst.str != "" {
			r.dst = units(dst.str)
		} else {
			continue
		}
		m.ranges = append(m.ranges, r)
	}
}

// units is s as big-endian UTF-16 units; an odd byte out is a unit alone.
func units(s string) []uint16 {
	u := make([]uint16, 0, (len(s)+1)/2)
	for i := 0; i+1 < len(s); i += 2 {
		u = append(u, uint16(s[i])<<8|uint16(s[i+1]))
	}
	if len(s)%2 == 1 {
		u = append(u, uint16(s[len(s)-1]))
	}
	return u
}

// utf16Text is u as text; a lone surrogate is U+FFFD.
func utf16Text(u []uint16) string { return string(utf16.Decode(u)) }

// codeLen is how many bytes the code at raw's start has: the shortest
// length whose code space holds it (1 when none does); without a code
// space, the length of the map's codes (1 if they differ).
func (m *toUnicode) codeLen(raw string) int {
	spaced := false
	for n := 1; n <= 4; n++ {
		for _, r := range m.space[n-1] {
			spaced = true
			if n <= len(raw) && r[0] <= codeOf(raw[:n]) && codeOf(raw[:n]) <= r[1] {
				return n
			}
		}
	}
	if spaced {
		return 1
	}
	return max(1, min(m.width, len(raw)))
}

// Decode is the text of raw's codes; an unmapped code is U+FFFD.
func (m *toUnicode) Decode(raw string) string {
	var b strings.Builder
	for len(raw) > 0 {
		n := m.codeLen(raw)
		code := codeOf(raw[:n])
		raw = raw[n:]
		if s, ok := m.chars[codeKey(n, code)]; ok {
			b.WriteString(s)
			continue
		}
		b.WriteString(m.inRange(n, code))
	}
	return b.String()
}

// inRange is the text of a code no single entry maps: the range's that
// starts last at or before it (ranges do not overlap in maps that work).
func (m *toUnicode) inRange(n int, code uint32) string {
	i := sort.Search(len(m.ranges), func(i int) bool {
		r := m.ranges[i]
		return r.n > n || r.n == n && r.lo > code
	}) - 1
	if i < 0 || m.ranges[i].n != n || code > m.ranges[i].hi {
		return string(utf8.RuneError)
	}
	r := m.ranges[i]
	off := code - r.lo
	if r.list != nil {
		if int(off) < len(r.list) {
			return r.list[off]
		}
		return string(utf8.RuneError)
	}
	u := append([]uint16(nil), r.dst...)
	u[len(u)-1] += uint16(off)
	return utf16Text(u)
}
