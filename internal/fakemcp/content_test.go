package fakemcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"testing"
)

func TestBigImageIsAValidPNG(t *testing.T) {
	t.Parallel()
	data := BigImage()
	if len(data) <= 5<<20 {
		t.Errorf("big image is %d bytes", len(data))
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b != image.Rect(0, 0, BigImageSide, BigImageSide) {
		t.Errorf("bounds = %v", b)
	}
	if want := base64.StdEncoding.EncodeToString(data); string(bigImageBase64()) != want {
		t.Error("bigImageBase64 differs from base64 of BigImage")
	}
}

func TestPNG1x1(t *testing.T) {
	t.Parallel()
	cfg, err := png.DecodeConfig(bytes.NewReader(PNG1x1()))
	if err != nil || cfg.Width != 1 || cfg.Height != 1 {
		t.Errorf("config = %+v, %v", cfg, err)
	}
}

func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `q"b\`, "nl\n cr\r tab\t nul\x00 esc\x1b del\x7f", "ünï ✓ \u2028 </script>"} {
		got := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil || back != s {
			t.Errorf("appendJSONString(%q) = %s (%v)", s, got, err)
		}
	}
}
