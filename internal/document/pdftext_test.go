package document

import (
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/document/documenttest"
)

// The CMap fpdf and tFPDF write for a TrueType font: every two-byte code
// is its own UTF-16 unit.
const identityCMap = `/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo
<</Registry (Adobe)
/Ordering (UCS)
/Supplement 0
>> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<0000> <FFFF>
endcodespacerange
1 beginbfrange
<0000> <FFFF> <0000>
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end`

// A map of single codes, a range to a string, a range to an array, a
// ligature and a character beyond the BMP; no code space.
const mixedCMap = `begincmap
3 beginbfchar
<0001> <0066006C>
<0002> (\000A)
<0003> <D83DDE00>
endbfchar
2 beginbfrange
<0010> <0012> <03B1>
<0020> <0021> [<0444> <0445>]
endbfrange
endcmap`

// A font's ToUnicode map gives the text: ranges count up whole UTF-16
// units (ledongthuc/pdf added to the last byte alone: φ came out as ¦);
// TeX's word gaps (TJ adjustments) and moves (Td, Tm) are spaces and line
// breaks; a font without a map keeps its encoding.
func TestPDFText(t *testing.T) {
	cases := []struct {
		name, cmap, content, want string
	}{
		{"identity range", identityCMap,
			"BT /F1 12 Tf <03A603AC03C403B5> Tj 0 -14 Td <0074007200BF0119> Tj ET",
			"Φάτε\ntr¿ę"},
		{"Cyrillic and Vietnamese", identityCMap,
			"BT /F1 12 Tf [<0415044804EC> -250 <1EA0006E>] TJ ET", "ЕшӬ Ạn"},
		{"chars, ranges, arrays", mixedCMap,
			"BT /F1 12 Tf <00010002000300100011001200200021009900130010> Tj ET", "flA😀αβγфх  α"}, // two unmapped
		{"word gaps and kerning", identityCMap,
			"BT /F1 12 Tf [<0057006F> 15 <0072> -15 <0064> -250 <0067> 40 <0061> -600 <0070>] TJ ET", "Word ga p"},
		{"moves on a line and off it", identityCMap,
			"BT /F1 12 Tf 72 700 Td <0061> Tj 30 0 Td <0062> Tj 0 -14 Td <0063> Tj 1 0 0 1 72 686 Tm <0064> Tj 1 0 0 1 72 600 Tm <0065> Tj ET",
			"a b\nc d\ne"},
		{"a font without a map", identityCMap,
			"BT /F2 12 Tf (caf\\351) Tj ET BT /F1 12 Tf <0021> Tj ET", "café\n!"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := extract(t, documenttest.PDFToUnicode(tc.cmap, tc.content), KindPDF, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.TrimSpace(strings.TrimPrefix(res.Text, "--- page 1 ---"))
			if got != tc.want {
				t.Errorf("text %q, want %q", got, tc.want)
			}
		})
	}
}

// A map that is not one, or broken, gives no decoder and no panic; its
// font falls back to the library's reading of the encoding.
func TestReadToUnicodeBroken(t *testing.T) {
	for _, cmap := range []string{
		"", "begincmap endcmap", "1 beginbfchar <01> endbfchar", "1 beginbfrange <0005> <0001> <0041> endbfrange",
		"1 beginbfchar <0102030405> <0041> endbfchar", "1 beginbfrange <00> <0000> <0041> endbfrange",
		"[[[ <<< ((( \\", "1 beginbfchar (\\", "1 beginbfchar <0001> <zz",
	} {
		if m := cmapOf(cmap); m != nil {
			t.Errorf("%q: a map of %d codes and %d ranges", cmap, len(m.chars), len(m.ranges))
		}
	}
}

// cmapOf reads cmap as a ToUnicode map.
func cmapOf(cmap string) *toUnicode {
	m := &toUnicode{chars: map[uint64]string{}}
	m.read([]byte(cmap))
	if len(m.chars) == 0 && len(m.ranges) == 0 {
		return nil
	}
	return m
}
