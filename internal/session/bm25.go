package session

import (
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The ranking behind tool_search: Okapi BM25 over one small document per
// tool — its name (counted three times: a word of the name says most about
// the tool), its server, its description and the names of its parameters.
// Words are lower-cased, split at anything that is not a letter or a digit
// and at camelCase humps, stripped of a few English suffixes (tabs → tab,
// clicking → click) and of stop words. A catalogue has at most a few
// thousand tools, so the index is a map of postings built in a millisecond;
// no library is needed for that (the Go full-text engines are built for
// millions of documents on disk).

// BM25's usual constants: k1 saturates a word's count, b normalises by
// the document's length.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// nameWeight is how many times a tool's name words count.
	nameWeight = 3
)

// bm25Index ranks documents against a query.
type bm25Index struct {
	docs     int
	lengths  []int                // words per document
	avgLen   float64              // mean of lengths
	postings map[string][]posting // word → the documents it is in
}

type posting struct {
	doc   int
	count int
}

// newBM25Index indexes docs, each a list of words (already normalised).
func newBM25Index(docs [][]string) *bm25Index {
	ix := &bm25Index{docs: len(docs), lengths: make([]int, len(docs)), postings: map[string][]posting{}}
	total := 0
	for i, words := range docs {
		ix.lengths[i] = len(words)
		total += len(words)
		counts := map[string]int{}
		for _, w := range words {
			counts[w]++
		}
		for _, w := range slices.Sorted(maps.Keys(counts)) {
			ix.postings[w] = append(ix.postings[w], posting{doc: i, count: counts[w]})
		}
	}
	if len(docs) > 0 {
		ix.avgLen = float64(total) / float64(len(docs))
	}
	return ix
}

// scored is a document with its score.
type scored struct {
	doc   int
	score float64
}

// search returns the documents that contain a word of the query, best
// first (ties in document order). A word given twice counts twice.
func (ix *bm25Index) search(query []string) []scored {
	scores := map[int]float64{}
	for _, w := range query {
		ps := ix.postings[w]
		if len(ps) == 0 {
			continue
		}
		n := float64(len(ps))
		idf := math.Log(1 + (float64(ix.docs)-n+0.5)/(n+0.5))
		for _, p := range ps {
			tf := float64(p.count)
			norm := 1 - bm25B + bm25B*float64(ix.lengths[p.doc])/ix.avgLen
			scores[p.doc] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
		}
	}
	out := make([]scored, 0, len(scores))
	for d, s := range scores {
		out = append(out, scored{doc: d, score: s})
	}
	slices.SortFunc(out, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return a.doc - b.doc
	})
	return out
}

// searchWords splits text into normalised words: lower case, split at
// every character that is not a letter or a digit and where a lower-case
// letter is followed by an upper-case one, stemmed, stop words left out.
func searchWords(text string) []string {
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			if w := stem(strings.ToLower(text[start:end])); w != "" && !stopWords[w] {
				words = append(words, w)
			}
			start = -1
		}
	}
	prev := rune(0)
	for i, r := range text {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush(i)
		case start >= 0 && unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i)
			start = i
		case start < 0:
			start = i
		}
		prev = r
	}
	flush(len(text))
	return words
}

// stem strips a few English suffixes so that the forms of a word meet:
// tabs, tab; clicking, clicked, click; queries, query. It is deliberately
// crude: both the documents and the query go through it.
func stem(w string) string {
	if utf8.RuneCountInString(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		return w[:len(w)-3]
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		return w[:len(w)-2]
	case strings.HasSuffix(w, "oes") && len(w) > 4:
		return w[:len(w)-2]
	case strings.HasSuffix(w, "es") && len(w) > 4 && strings.ContainsAny(w[len(w)-3:len(w)-2], "sxz"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}

// stopWords carry no meaning for a search (after stemming).
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"can": true, "do": true, "for": true, "from": true, "how": true, "i": true, "if": true, "in": true,
	"into": true, "is": true, "it": true, "its": true, "me": true, "my": true, "of": true, "on": true,
	"or": true, "so": true, "that": true, "the": true, "thi": true, "this": true, "to": true,
	"tool": true, "use": true, "want": true, "what": true, "when": true, "which": true, "will": true,
	"with": true, "you": true, "your": true, "need": true, "some": true, "any": true, "all": true,
}
