package llm

import (
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Tokenizer counts tokens the way the providers do, offline: OpenAI's
// o200k_base (the encoding of its current models; Anthropic's tokenizer is
// not published, and counts within a few percent of it on English, JSON
// and HTML). The vocabulary is embedded and built on the first Count
// (about 40 ms, 6 MB), so a Tokenizer costs nothing until it is used. Its
// methods are safe for concurrent use.
type Tokenizer struct {
	once sync.Once
	enc  *codec.Codec
}

// Count returns the number of tokens in s.
func (t *Tokenizer) Count(s string) int {
	if s == "" {
		return 0
	}
	t.once.Do(func() { t.enc = codec.NewO200kBase() })
	n, err := t.enc.Count(s)
	if err != nil { // invalid UTF-8: count it as the providers would see it
		n, err = t.enc.Count(strings.ToValidUTF8(s, "\uFFFD"))
		if err != nil {
			return len(s)/4 + 1
		}
	}
	return n
}
