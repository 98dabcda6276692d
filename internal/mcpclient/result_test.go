package mcpclient

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// onePixelPNG is a 1×1 transparent PNG.
var onePixelPNG, _ = base64.StdEncoding.DecodeString(
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// callResult builds a raw tools/call result from content elements.
func callResult(t testing.TB, isError bool, content ...any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"content": content, "isError": isError})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// testLimits are the mapper's limits the truncation tests use (the spec's
// 2000 lines / 50 KB; the mapper's own are a memory bound).
var testLimits = resultLimits{lines: 2000, bytes: testMaxBytes, image: MaxImageBytes}

const testMaxBytes = 50 * 1024

func mustMap(t *testing.T, raw json.RawMessage) Result {
	t.Helper()
	res, err := mapResult("srv", "tool", raw, testLimits, false)
	if err != nil {
		t.Fatalf("MapResult(%s): %v", raw, err)
	}
	if res.Server != "srv" || res.Tool != "tool" {
		t.Fatalf("server/tool = %q/%q", res.Server, res.Tool)
	}
	return res
}

func text(s string) chat.Part { return chat.Part{Kind: chat.TextPart, Text: s} }

type obj = map[string]any

func TestMapResultContent(t *testing.T) {
	png := b64(onePixelPNG)
	img := chat.Part{Kind: chat.ImagePart, Data: onePixelPNG, MIMEType: "image/png"}
	tests := []struct {
		name    string
		raw     string
		want    []chat.Part
		isError bool
		images  int
	}{
		{"text", `{"content":[{"type":"text","text":"hello"}]}`, []chat.Part{text("hello")}, false, 0},
		{"texts keep their parts", `{"content":[{"type":"text","text":"a"},{"type":"text","text":""},{"type":"text","text":"b\n"}]}`,
			[]chat.Part{text("a"), text(""), text("b\n")}, false, 0},
		{"text escapes and unicode", `{"content":[{"type":"text","text":"\u00e9\"\\\n🌋\ud800"}]}`, []chat.Part{text("é\"\\\n🌋\uFFFD")}, false, 0},
		{"image", `{"content":[{"type":"image","data":"` + png + `","mimeType":"image/png"}]}`, []chat.Part{img}, false, 1},
		{"image with escaped slash", `{"content":[{"type":"image","data":"` + strings.ReplaceAll(b64([]byte{0xfb, 0xff, 0xbf}), "/", `\/`) + `","mimeType":"image/x"}]}`,
			[]chat.Part{{Kind: chat.ImagePart, Data: []byte{0xfb, 0xff, 0xbf}, MIMEType: "image/x"}}, false, 1},
		{"image unpadded", `{"content":[{"type":"image","data":"` + strings.TrimRight(png, "=") + `","mimeType":"image/png"}]}`, []chat.Part{img}, false, 1},
		{"image with line breaks", `{"content":[{"type":"image","data":"` + png[:20] + `\n` + png[20:] + `","mimeType":"image/png"}]}`, []chat.Part{img}, false, 1},
		{"image type sniffed", `{"content":[{"type":"image","data":"` + png + `"}]}`, []chat.Part{img}, false, 1},
		{"image unknown type", `{"content":[{"type":"image","data":"AAEC"}]}`, []chat.Part{text("[image omitted: unknown type, 3 bytes]")}, false, 0},
		{"image invalid base64", `{"content":[{"type":"image","data":"not base64!","mimeType":"image/png"}]}`,
			[]chat.Part{text("[image omitted: image/png, invalid base64 data]")}, false, 0},
		{"image data not a string", `{"content":[{"type":"image","data":42,"mimeType":"image/png"}]}`,
			[]chat.Part{text("[image omitted: image/png, invalid base64 data]")}, false, 0},
		{"image without data", `{"content":[{"type":"image","mimeType":"image/png"}]}`, []chat.Part{text("[image omitted: image/png, no data]")}, false, 0},
		{"audio", `{"content":[{"type":"audio","data":"AAECAw==","mimeType":"audio/wav"}]}`, []chat.Part{text("[audio omitted: audio/wav, 4 bytes]")}, false, 0},
		{"audio without type", `{"content":[{"type":"audio","data":"AAEC"}]}`, []chat.Part{text("[audio omitted: unknown type, 3 bytes]")}, false, 0},
		{"resource text", `{"content":[{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"line 1\nline 2"}}]}`,
			[]chat.Part{text("Resource file:///a.txt:\nline 1\nline 2")}, false, 0},
		{"resource empty text", `{"content":[{"type":"resource","resource":{"uri":"mem://x","text":""}}]}`, []chat.Part{text("Resource mem://x:\n")}, false, 0},
		{"resource blob", `{"content":[{"type":"resource","resource":{"uri":"file:///a.pdf","mimeType":"application/pdf","blob":"JVBERi0="}}]}`,
			[]chat.Part{text("[resource file:///a.pdf: application/pdf, 5 bytes omitted]")}, false, 0},
		{"resource with null blob", `{"content":[{"type":"resource","resource":{"uri":"mem://x","blob":null}}]}`, []chat.Part{text("Resource mem://x:\n")}, false, 0},
		{"resource without contents", `{"content":[{"type":"resource"}]}`, []chat.Part{text("[resource omitted: no contents]")}, false, 0},
		{"resource link", `{"content":[{"type":"resource_link","uri":"file:///snap.yml","name":"snapshot","mimeType":"text/yaml"}]}`,
			[]chat.Part{text("Resource link: file:///snap.yml (snapshot)")}, false, 0},
		{"resource link without name", `{"content":[{"type":"resource_link","uri":"https://x.test/"}]}`, []chat.Part{text("Resource link: https://x.test/")}, false, 0},
		{"unknown type", `{"content":[{"type":"video","data":"AAAA"},{"type":"text","text":"after"}]}`,
			[]chat.Part{text("[unsupported content type: video]"), text("after")}, false, 0},
		{"missing type", `{"content":[{"text":"x"}]}`, []chat.Part{text("[unsupported content type: (missing)]")}, false, 0},
		{"structured content alone", `{"structuredContent":{"b":1, "a":[true,"é"]}}`, []chat.Part{text(`{"b":1, "a":[true,"é"]}`)}, false, 0},
		{"structured content with empty content", `{"content":[],"structuredContent":[1,2]}`, []chat.Part{text(`[1,2]`)}, false, 0},
		{"structured content ignored beside content", `{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`, []chat.Part{text(`{"a":1}`)}, false, 0},
		{"structured content made valid UTF-8", "{\"structuredContent\":\"a\xffb\"}", []chat.Part{text("\"a\uFFFDb\"")}, false, 0},
		{"structured null", `{"structuredContent":null}`, []chat.Part{}, false, 0},
		{"empty", `{}`, []chat.Part{}, false, 0},
		{"unknown fields ignored", `{"_meta":{"x":1},"content":[{"type":"text","text":"t","annotations":{"audience":["user"]}}],"future":[1]}`,
			[]chat.Part{text("t")}, false, 0},
		{"error with content and image", `{"isError":true,"content":[{"type":"text","text":"boom"},{"type":"image","data":"` + png + `","mimeType":"image/png"}]}`,
			[]chat.Part{text("boom"), img}, true, 1},
		{"error without content", `{"isError":true}`, []chat.Part{}, true, 0},
		{"ill-typed element does not fail the others", `{"content":[{"type":"resource","resource":"oops"},{"type":"text","text":"ok"},null,{"type":"text","text":7}],"isError":true}`,
			[]chat.Part{text("[invalid content: resource]"), text("ok"), text("[invalid content: text]")}, true, 0},
		{"content not an array", `{"content":{"type":"text","text":"hi"}}`, []chat.Part{text("hi")}, false, 0},
		{"content a string", `{"content":"hi","structuredContent":{"x":1}}`, []chat.Part{text("[invalid content: (missing)]"), text("Structured content:\n{\"x\":1}")}, false, 0},
		{"isError not a bool", `{"isError":"true","content":[{"type":"text","text":"x"}]}`, []chat.Part{text("x")}, false, 0},
		{"structured content in the slow path", `{"isError":1,"structuredContent":{"x":1}}`, []chat.Part{text(`{"x":1}`)}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustMap(t, json.RawMessage(tt.raw))
			if res.Content == nil {
				res.Content = []chat.Part{}
			}
			if !reflect.DeepEqual(res.Content, tt.want) {
				t.Errorf("content = %#v\n want %#v", res.Content, tt.want)
			}
			if res.IsError != tt.isError || res.Images != tt.images || res.Truncated {
				t.Errorf("isError, images, truncated = %v, %d, %v; want %v, %d, false", res.IsError, res.Images, res.Truncated, tt.isError, tt.images)
			}
		})
	}
}

func TestMapResultNotAnObject(t *testing.T) {
	for _, raw := range []string{``, `null`, `[]`, `"text"`, `42`, `{`, `{"content":[}`, `{} {}`, "\xff"} {
		t.Run(raw, func(t *testing.T) {
			res, err := MapResult("srv", "tool", json.RawMessage(raw))
			if !errors.Is(err, ErrMalformedResult) {
				t.Fatalf("err = %v, want ErrMalformedResult", err)
			}
			if len(res.Content) != 0 {
				t.Fatalf("content = %v, want none", res.Content)
			}
		})
	}
}

func TestMapResultImageSize(t *testing.T) {
	tests := []struct {
		name string
		size int
		keep bool
	}{
		{"at the limit", MaxImageBytes, true},
		{"one byte over", MaxImageBytes + 1, false},
		{"one byte over, two bytes of padding", MaxImageBytes + 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := make([]byte, tt.size)
			copy(data, onePixelPNG)
			res := mustMap(t, callResult(t, false, obj{"type": "image", "data": b64(data), "mimeType": "image/png"}))
			if tt.keep {
				if res.Images != 1 || len(res.Content[0].Data) != tt.size {
					t.Fatalf("image not kept: images = %d", res.Images)
				}
				return
			}
			want := fmt.Sprintf("[image omitted: image/png, %d bytes]", tt.size)
			if res.Images != 0 || res.Text() != want {
				t.Fatalf("got images = %d, text %q; want %q", res.Images, res.Text(), want)
			}
		})
	}
}

func TestSniffImageType(t *testing.T) {
	for in, want := range map[string]string{
		string(onePixelPNG):           "image/png",
		"\xff\xd8\xff\xe0":            "image/jpeg",
		"GIF87a..":                    "image/gif",
		"GIF89a..":                    "image/gif",
		"RIFF\x00\x00\x00\x00WEBPVP8": "image/webp",
		"RIFF\x00\x00\x00\x00WAVE":    "",
		"<svg/>":                      "",
		"":                            "",
	} {
		if got := sniffImageType([]byte(in)); got != want {
			t.Errorf("sniffImageType(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBase64DecodedLen(t *testing.T) {
	for n := range 20 {
		data := make([]byte, n)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			s := enc.EncodeToString(data)
			if got := base64DecodedLen([]byte(s)); got != n {
				t.Errorf("base64DecodedLen(%q) = %d, want %d", s, got, n)
			}
		}
	}
	if got := base64DecodedLen([]byte("AAAA\r\nAAAA\n")); got != 6 {
		t.Errorf("with line breaks: %d, want 6", got)
	}
}

func lines(n int, format string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

func TestMapResultTruncation(t *testing.T) {
	note := func(shownLines, totalLines, shownBytes, totalBytes int) string {
		return fmt.Sprintf("[Output truncated: showing the first %d of %d lines (%d of %d bytes); tool output is limited to 2000 lines / 50 KB.]",
			shownLines, totalLines, shownBytes, totalBytes)
	}
	l3000 := lines(3000, "line %d")
	head2000 := l3000[:strings.Index(l3000, "\nline 2001\n")]
	l1000 := lines(1000, strings.Repeat("x", 96)+"%04d") // 100-byte lines
	wide := strings.Repeat("é", 30000)                   // 60000 bytes, one line
	exact := strings.Repeat("a", testMaxBytes)
	l2000nl := lines(2000, "l%d") + "\n"
	longTail := "short first line\n" + strings.Repeat("y", 70000)
	tests := []struct {
		name      string
		parts     []string
		want      []string // text parts, note included
		truncated bool
	}{
		{"under both limits", []string{"a\nb"}, []string{"a\nb"}, false},
		{"exactly 2000 lines", []string{lines(2000, "l%d")}, []string{lines(2000, "l%d")}, false},
		{"2000 lines and a final newline", []string{l2000nl}, []string{l2000nl}, false},
		{"exactly 50 KB", []string{exact}, []string{exact}, false},
		{"too many lines", []string{l3000}, []string{head2000, note(2000, 3000, len(head2000), len(l3000))}, true},
		{"too many bytes cut on a line", []string{l1000}, []string{l1000[:506*101-1], note(506, 1000, 506*101-1, len(l1000))}, true},
		{"one wide line cut on a rune", []string{wide}, []string{wide[:testMaxBytes], note(1, 1, testMaxBytes, len(wide))}, true},
		{"odd cut backs off to the rune start", []string{"x" + wide}, []string{"x" + wide[:testMaxBytes-2], note(1, 1, testMaxBytes-1, len(wide)+1)}, true},
		{"line boundary too early: cut mid-line", []string{longTail}, []string{longTail[:testMaxBytes], note(2, 2, testMaxBytes, len(longTail))}, true},
		{"one byte over", []string{exact + "b"}, []string{exact, note(1, 1, testMaxBytes, testMaxBytes+1)}, true},
		{"parts: the cut part is shortened, later ones dropped",
			[]string{strings.Repeat("a", 40000), l1000, "dropped"},
			[]string{strings.Repeat("a", 40000), l1000[:110*101-1], note(111, 1002, 40001+110*101-1, 40000+len(l1000)+len("dropped")+2)}, true},
		{"parts: a cut on the line boundary before a long part drops it",
			[]string{strings.Repeat("a", 40000), strings.Repeat("b", 20000)},
			[]string{strings.Repeat("a", 40000), note(1, 2, 40000, 60001)}, true},
		{"parts: the line limit spans parts",
			[]string{lines(1500, "p%d"), lines(1000, "q%d")},
			[]string{lines(1500, "p%d"), lines(500, "q%d"), note(2000, 2500, len(lines(1500, "p%d")+"\n"+lines(500, "q%d")), len(lines(1500, "p%d")+"\n"+lines(1000, "q%d")))}, true},
		{"parts: the cut falls on the separator",
			[]string{lines(2000, "p%d"), "more"},
			[]string{lines(2000, "p%d"), note(2000, 2001, len(lines(2000, "p%d")), len(lines(2000, "p%d"))+5)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var content []any
			for i, p := range tt.parts {
				content = append(content, obj{"type": "text", "text": p})
				if i == 0 {
					content = append(content, obj{"type": "image", "data": b64(onePixelPNG), "mimeType": "image/png"})
				}
			}
			res := mustMap(t, callResult(t, false, content...))
			var got []string
			for _, c := range res.Content {
				if c.Kind == chat.TextPart {
					got = append(got, c.Text)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("text parts differ:\n got %s\nwant %s", summarize(got), summarize(tt.want))
			}
			if res.Truncated != tt.truncated || res.Images != 1 || res.Content[1].Kind != chat.ImagePart {
				t.Errorf("truncated = %v, images = %d, part 1 = %s; want %v, 1, the image", res.Truncated, res.Images, res.Content[1].Kind, tt.truncated)
			}
			assertValidText(t, res)
		})
	}
}

func TestMapResultTruncationNoteSmallLimits(t *testing.T) {
	raw := callResult(t, false, obj{"type": "text", "text": "a\nb\nc\nd\ne"})
	res, err := mapResult("s", "t", raw, resultLimits{lines: 3, bytes: 1000, image: 10}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := "a\nb\nc\n[Output truncated: showing the first 3 of 5 lines (5 of 9 bytes); tool output is limited to 3 lines / 1000 bytes.]"
	if got := res.Text(); got != want || !res.Truncated {
		t.Fatalf("text = %q (truncated %v), want %q", got, res.Truncated, want)
	}
}

func summarize(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		if len(p) > 80 {
			p = fmt.Sprintf("%s…(%d bytes)…%s", p[:30], len(p), p[len(p)-30:])
		}
		fmt.Fprintf(&b, "\n\t%q", p)
	}
	return b.String()
}

func assertValidText(t *testing.T, res Result) {
	t.Helper()
	for i, c := range res.Content {
		if c.Kind == chat.TextPart && !utf8.ValidString(c.Text) {
			t.Fatalf("part %d is not valid UTF-8: %q", i, c.Text)
		}
	}
}

func FuzzMapResult(f *testing.F) {
	png := b64(onePixelPNG)
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hello"}]}`,
		`{"content":[{"type":"text","text":"a\nb\nc\nd\ne\nf"},{"type":"text","text":"ü🌋"}]}`,
		`{"content":[{"type":"image","data":"` + png + `","mimeType":"image/png"}],"isError":true}`,
		`{"content":[{"type":"image","data":"` + png + `"},{"type":"audio","data":"AAAA","mimeType":"audio/wav"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"u","text":"t"}},{"type":"resource","resource":{"uri":"u","blob":"AA=="}}]}`,
		`{"content":[{"type":"resource_link","uri":"u","name":"n"},{"type":"what"}]}`,
		`{"structuredContent":{"a":"é"}}`,
		`{"content":[{"type":"resource","resource":"x"}],"isError":"x"}`,
		`{"content":{"type":"text","text":"x"}}`,
		`[1]`, `null`, ``, `{"content":[{"type":"text","text":"\ud800"}]}`,
		`{"content":[{"type":"text","text":"` + strings.Repeat("é", 40) + `"}]}`,
	} {
		f.Add([]byte(s))
	}
	small := resultLimits{lines: 4, bytes: 32, image: 40}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, lim := range []resultLimits{small, defaultResultLimits} {
			res, err := mapResult("s", "t", raw, lim, false)
			if err != nil {
				if !errors.Is(err, ErrMalformedResult) {
					t.Fatalf("error %v is not ErrMalformedResult", err)
				}
				continue
			}
			txt := res.Text()
			if !utf8.ValidString(txt) {
				t.Fatalf("text is not valid UTF-8: %q", txt)
			}
			const maxNote = 200
			if len(txt) > lim.bytes+1+maxNote {
				t.Fatalf("text is %d bytes, over %d + the note", len(txt), lim.bytes)
			}
			if n := countLines(txt); lim.lines > 0 && n > lim.lines+1 {
				t.Fatalf("text has %d lines, over %d + the note", n, lim.lines)
			}
			if strings.Contains(txt, "[Output truncated:") != res.Truncated && !strings.Contains(string(raw), "Output truncated") {
				t.Fatalf("truncated = %v but text is %q", res.Truncated, txt)
			}
			images := 0
			for _, c := range res.Content {
				if c.Kind == chat.ImagePart {
					images++
					if len(c.Data) == 0 || len(c.Data) > lim.image || c.MIMEType == "" {
						t.Fatalf("bad image part: %d bytes, mime %q", len(c.Data), c.MIMEType)
					}
				}
			}
			if images != res.Images {
				t.Fatalf("Images = %d, counted %d", res.Images, images)
			}
		}
	})
}

// snapshotText is about 50 KB of Playwright-snapshot-like text: quotes and
// newlines that JSON escapes, and some non-ASCII.
func snapshotText(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "- link \"Résultat n°%d — \\\"example\\\"\" [ref=e%d] [cursor=pointer]:\n  - /url: https://example.com/items/%d?q=a&b=c\n", i, i, i)
	}
	return b.String()[:size]
}

func benchmarkMapResult(b *testing.B, raw json.RawMessage) {
	b.Helper()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MapResult("playwright", "browser_snapshot", raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMapResult(b *testing.B) {
	text := snapshotText(50_000)
	b.Run("text50KB", func(b *testing.B) {
		benchmarkMapResult(b, callResult(b, false, obj{"type": "text", "text": text}))
	})
	b.Run("text200KB_truncated", func(b *testing.B) {
		benchmarkMapResult(b, callResult(b, false, obj{"type": "text", "text": snapshotText(200_000)}))
	})
	b.Run("text50KB_image100KB", func(b *testing.B) {
		img := make([]byte, 100_000)
		copy(img, onePixelPNG)
		benchmarkMapResult(b, callResult(b, false, obj{"type": "text", "text": text},
			obj{"type": "image", "data": b64(img), "mimeType": "image/png"}))
	})
}

// The fast decoder must agree with encoding/json whenever it takes a result.
func FuzzDecodeSimpleResult(f *testing.F) {
	for _, seed := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b","annotations":{"x":1}}],"isError":true}`,
		`{"content":[],"structuredContent":{"a":[1,2]}}`,
		`{"content":[{"type":"text","text":"esc\"aped"}]}`,
		`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`,
		`{"Content":[{"type":"text","text":"case"}]}`,
		`{"content":null,"isError":false}`,
		`{"content":[{"type":"text","text":"x","type":"image"}]}`,
		`{"content":[{"type":"text","text":"a"}],"content":[{"type":"text","text":"b"}]}`,
		`{"content":[{"type":"text","text":"a"}],"\u0063ontent":[{"type":"text","text":"b"}]}`,
		`{"content":[{"type":"text","text":"a","t\u0065xt":"b"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fast, ok := decodeSimpleResult(raw, false)
		if json.Valid(raw) { // the transport's path skips validation: same answer
			trusted, tok := decodeSimpleResult(raw, true)
			if tok != ok || fmt.Sprint(trusted) != fmt.Sprint(fast) {
				t.Fatalf("trusted path %v %+v, validating path %v %+v for %q", tok, trusted, ok, fast, raw)
			}
		}
		if !ok {
			return
		}
		var full callResultWire
		if err := json.Unmarshal(raw, &full); err != nil {
			t.Fatalf("fast path took %q, encoding/json refuses it: %v", raw, err)
		}
		if fast.IsError != full.IsError || len(fast.Content) != len(full.Content) ||
			string(fast.StructuredContent) != string(full.StructuredContent) {
			t.Fatalf("fast %+v, full %+v for %q", fast, full, raw)
		}
		for i := range fast.Content {
			f, g := fast.Content[i], full.Content[i]
			if f.Type != g.Type || f.Text != g.Text || f.MIMEType != g.MIMEType || string(f.Data) != string(g.Data) ||
				f.URI != g.URI || f.Name != g.Name || (f.Resource == nil) != (g.Resource == nil) {
				t.Fatalf("part %d: fast %+v, full %+v for %q", i, fast.Content[i], full.Content[i], raw)
			}
		}
	})
}
