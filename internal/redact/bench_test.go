package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// benchSecrets returns 20 token-like secrets of 16 to 60 bytes.
func benchSecrets() []string {
	rng := rand.New(rand.NewPCG(1, 2))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	prefixes := []string{"ghp_", "sk-proj-", "xoxb-", "AKIA", "hf_", "npm_", "glpat-", "sk-ant-api03-", "", "postgres://app:"}
	secrets := make([]string, 20)
	for i := range secrets {
		var b strings.Builder
		b.WriteString(prefixes[i%len(prefixes)])
		for n := 16 + rng.IntN(45); b.Len() < n; {
			b.WriteByte(alnum[rng.IntN(len(alnum))])
		}
		secrets[i] = b.String()
	}
	return secrets
}

// benchText returns about 50 KB of log- and JSON-like English text. With
// plant, 4 of the secrets occur in it, 12 times in all.
func benchText(secrets []string, plant bool) string {
	rng := rand.New(rand.NewPCG(3, 4))
	words := strings.Fields(`the server returned an error while fetching the page and the browser
		snapshot shows a heading with the text Example Domain this domain is for use in illustrative
		examples in documents you may use this domain in literature without prior coordination or asking
		for permission {"type":"text","text":"ok"} https://example.com/path?query=1 GET POST 200 404
		token key password secret github openai anthropic sk ghp_ npm hf AKIA xoxb 0123456789 2026-09-26T12:00:00Z`)
	var b strings.Builder
	for line := 0; b.Len() < 50*1024; line++ {
		for range 8 + rng.IntN(8) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		if plant && line%60 == 7 {
			b.WriteString(secrets[(line/60)%4*5])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func BenchmarkRedact(b *testing.B) {
	secrets := benchSecrets()
	text := benchText(secrets, true)
	r := NewRedactor(secrets)
	if n := strings.Count(r.Redact(text), Placeholder); n == 0 {
		b.Fatal("no secret planted")
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = r.Redact(text)
	}
}

func BenchmarkRedactNoMatch(b *testing.B) {
	secrets := benchSecrets()
	text := benchText(secrets, false)
	r := NewRedactor(secrets)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Redact(text)
	}
}

func BenchmarkRedactRegistry(b *testing.B) {
	secrets := benchSecrets()
	text := benchText(secrets, true)
	reg := NewRegistry()
	reg.Add(secrets...)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = reg.Redact(text)
	}
}

// BenchmarkRedactNaiveReplace is the baseline the Redactor replaces: one
// strings.ReplaceAll per secret.
func BenchmarkRedactNaiveReplace(b *testing.B) {
	secrets := benchSecrets()
	text := benchText(secrets, true)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s := text
		for _, sec := range secrets {
			s = strings.ReplaceAll(s, sec, Placeholder)
		}
		_ = s
	}
}

// BenchmarkRedactShortSecret is BenchmarkRedact with one secret of
// MinSecretLen bytes among the 20, which shortens the window and its jumps.
func BenchmarkRedactShortSecret(b *testing.B) {
	secrets := benchSecrets()
	secrets[19] = "pr0xyPw8"
	text := benchText(secrets, true)
	r := NewRedactor(secrets)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = r.Redact(text)
	}
}
