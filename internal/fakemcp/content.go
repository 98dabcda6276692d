package fakemcp

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"slices"
	"sync"
)

// BigImageSide is the width and height of big_image's PNG. Stored without
// compression as RGBA it is about 5.8 MB (more than 5 MB and 5 MiB).
const BigImageSide = 1200

// PNG1x1 returns a valid 1×1 PNG (one opaque red pixel), the image of the
// image and browser_take_screenshot tools.
func PNG1x1() []byte { return slices.Clone(png1x1()) }

var png1x1 = sync.OnceValue(func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	return encodePNG(img, png.DefaultCompression)
})

// BigImage returns big_image's PNG: BigImageSide² pixels, uncompressed, so
// more than 5 MB decoded from base64. The slice is shared: don't modify it.
func BigImage() []byte { return bigImage() }

var bigImage = sync.OnceValue(func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, BigImageSide, BigImageSide))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	return encodePNG(img, png.NoCompression)
})

func encodePNG(img image.Image, level png.CompressionLevel) []byte {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: level}
	if err := enc.Encode(&buf, img); err != nil {
		panic("fakemcp: encode png: " + err.Error())
	}
	return buf.Bytes()
}

// WAV returns the links tool's audio: 10 ms of 8 kHz 8-bit mono silence.
func WAV() []byte {
	const rate, samples = 8000, 80
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	b.Write(le.AppendUint32(nil, 36+samples))
	b.WriteString("WAVEfmt ")
	b.Write(le.AppendUint32(nil, 16))
	b.Write(le.AppendUint16(nil, 1)) // PCM
	b.Write(le.AppendUint16(nil, 1)) // mono
	b.Write(le.AppendUint32(nil, rate))
	b.Write(le.AppendUint32(nil, rate)) // byte rate
	b.Write(le.AppendUint16(nil, 1))    // block align
	b.Write(le.AppendUint16(nil, 8))    // bits per sample
	b.WriteString("data")
	b.Write(le.AppendUint32(nil, samples))
	b.Write(bytes.Repeat([]byte{128}, samples))
	return b.Bytes()
}
