package jsonscan

// Valid reports whether b is one JSON value with optional surrounding
// white space: exactly encoding/json.Valid's answer (invalid UTF-8 inside
// strings is accepted, nesting deeper than 10,000 is not), in a single
// pass several times faster. Every line from a server and every result
// the mapper reads goes through it, up to tens of kilobytes for a page
// snapshot. FuzzValidJSON holds it to json.Valid.
func Valid(b []byte) bool {
	v := jsonValidator{b: b}
	i, ok := v.value(SkipSpace(b, 0), 0)
	return ok && SkipSpace(b, i) == len(b)
}

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

type jsonValidator struct{ b []byte }

// value validates the value at b[i] and returns the index past it.
func (v jsonValidator) value(i, depth int) (int, bool) {
	b := v.b
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return v.str(i)
	case c == '{':
		return v.object(i, depth+1)
	case c == '[':
		return v.array(i, depth+1)
	case c == '-' || c >= '0' && c <= '9':
		return v.number(i)
	case c == 't':
		return v.literal(i, "true")
	case c == 'f':
		return v.literal(i, "false")
	case c == 'n':
		return v.literal(i, "null")
	}
	return i, false
}

func (v jsonValidator) object(i, depth int) (int, bool) {
	if depth > maxJSONDepth {
		return i, false
	}
	b := v.b
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		var ok bool
		if i, ok = v.str(i); !ok {
			return i, false
		}
		if i = SkipSpace(b, i); i >= len(b) || b[i] != ':' {
			return i, false
		}
		if i, ok = v.value(SkipSpace(b, i+1), depth); !ok {
			return i, false
		}
		if i = SkipSpace(b, i); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func (v jsonValidator) array(i, depth int) (int, bool) {
	if depth > maxJSONDepth {
		return i, false
	}
	b := v.b
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = v.value(i, depth); !ok {
			return i, false
		}
		if i = SkipSpace(b, i); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// str validates the string that starts at b[i] (a quote).
func (v jsonValidator) str(i int) (int, bool) {
	b := v.b
	for i++; i < len(b); i++ {
		for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' { // the plain run
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return i, false
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at b[i].
func (v jsonValidator) number(i int) (int, bool) {
	b := v.b
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		i = digits(b, i)
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func (v jsonValidator) literal(i int, lit string) (int, bool) {
	if len(v.b)-i < len(lit) || string(v.b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}
