package document

// cmapToken is one token of a CMap that its bf sections use: a string
// (hex or literal), an array of strings, or an operator's word. Names,
// numbers and dictionaries are operands nobody reads: they come as empty
// strings.
type cmapToken struct {
	word string   // an operator (begincodespacerange, endbfchar…)
	str  string   // a string operand's bytes
	list []string // an array operand's strings (non-nil for an array)
}

// cmapTokens splits a CMap into tokens. It never fails: what it cannot read
// is skipped.
func cmapTokens(data []byte) []cmapToken {
	var out []cmapToken
	var list []string // the open array, nil outside one
	inArray := false
	add := func(t cmapToken) {
		if inArray {
			list = append(list, t.str)
			return
		}
		out = append(out, t)
	}
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case isPDFSpace(c):
			i++
		case c == '%':
			for i < len(data) && data[i] != '\n' && data[i] != '\r' {
				i++
			}
		case c == '<' && i+1 < len(data) && data[i+1] == '<', c == '>' && i+1 < len(data) && data[i+1] == '>':
			i += 2
		case c == '<':
			var s string
			s, i = hexString(data, i+1)
			add(cmapToken{str: s})
		case c == '(':
			var s string
			s, i = literalString(data, i+1)
			add(cmapToken{str: s})
		case c == '[':
			inArray, list = true, []string{}
			i++
		case c == ']':
			if inArray {
				out = append(out, cmapToken{list: list})
			}
			inArray, list = false, nil
			i++
		default:
			j := i + 1
			for j < len(data) && !isPDFSpace(data[j]) && !isPDFDelim(data[j]) {
				j++
			}
			if c == '/' || isNumberStart(c) {
				add(cmapToken{})
			} else if !inArray {
				out = append(out, cmapToken{word: string(data[i:j])})
			}
			i = j
		}
	}
	return out
}

func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isPDFDelim(c byte) bool {
	switch c {
	case '<', '>', '(', ')', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func isNumberStart(c byte) bool { return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' }

// hexString reads <…> from after its '<': its bytes (an odd last digit
// followed by 0) and where the input goes on.
func hexString(data []byte, i int) (string, int) {
	var b []byte
	var hi byte
	half := false
	for ; i < len(data) && data[i] != '>'; i++ {
		v, ok := hexDigit(data[i])
		if !ok {
			continue
		}
		if half {
			b = append(b, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		b = append(b, hi<<4)
	}
	return string(b), i + 1
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// literalString reads (…) from after its '(': nested parentheses, and the
// escapes \n \r \t \b \f \( \) \\ and \ddd.
func literalString(data []byte, i int) (string, int) {
	var b []byte
	depth := 1
	for ; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '\\' && i+1 < len(data):
			i++
			b, i = escaped(b, data, i)
			continue
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return string(b), i + 1
			}
		}
		b = append(b, c)
	}
	return string(b), i
}

// escaped appends the escape at data[i] (after its backslash) to b, and
// gives the index of its last byte.
func escaped(b, data []byte, i int) ([]byte, int) {
	switch c := data[i]; c {
	case 'n':
		return append(b, '\n'), i
	case 'r':
		return append(b, '\r'), i
	case 't':
		return append(b, '\t'), i
	case 'b':
		return append(b, '\b'), i
	case 'f':
		return append(b, '\f'), i
	case '\r', '\n': // a line continued
		if c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		return b, i
	default:
		if c < '0' || c > '7' {
			return append(b, c), i
		}
		v := 0
		j := i
		for ; j < len(data) && j < i+3 && data[j] >= '0' && data[j] <= '7'; j++ {
			v = v*8 + int(data[j]-'0')
		}
		return append(b, byte(v)), j - 1
	}
}
