package fakemcp

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"slices"
	"sync"
)

// BigImageSide is the width and height of big_image's PNG: a black 8-bit
// grey image stored without compression, about 5.8 MB (more than 5 MB and
// 5 MiB).
const BigImageSide = 2400

// PNG1x1 returns a valid 1×1 PNG (one opaque red pixel), the image of the
// image and browser_take_screenshot tools.
func PNG1x1() []byte { return slices.Clone(png1x1()) }

var png1x1 = sync.OnceValue(func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	return encodePNG(img, png.DefaultCompression)
})

// BigImage returns big_image's PNG, more than 5 MB. The slice is shared:
// don't modify it.
func BigImage() []byte { return bigImage() }

// bigImage builds the PNG by hand rather than with image/png: the race
// detector makes per-byte loops over 6 MB cost most of a second, and test
// binaries are usually built with -race. The scanlines are all zero bytes
// (filter none, black), so only chunk framing and checksums need writing:
// the zlib stream is stored blocks, its Adler-32 has a closed form, and
// CRC-32 runs in assembly.
var bigImage = sync.OnceValue(func() []byte {
	const side = BigImageSide
	const raw = side * (1 + side) // a filter byte per row, then the pixels
	const blockMax = 65535
	blocks := (raw + blockMax - 1) / blockMax
	zlen := 2 + blocks*5 + raw + 4
	be := binary.BigEndian

	out := make([]byte, 0, 8+25+12+zlen+12)
	out = append(out, "\x89PNG\r\n\x1a\n"...)
	ihdr := be.AppendUint32(nil, side)
	ihdr = be.AppendUint32(ihdr, side)
	ihdr = append(ihdr, 8, 0, 0, 0, 0) // 8-bit greyscale, deflate, no interlace
	out = appendChunk(out, "IHDR", ihdr)

	out = be.AppendUint32(out, uint32(zlen))
	idat := len(out)
	out = append(out, "IDAT"...)
	out = append(out, 0x78, 0x01) // zlib header: deflate, 32K window
	for left := raw; left > 0; {
		n := min(left, blockMax)
		left -= n
		final := byte(0)
		if left == 0 {
			final = 1
		}
		out = append(out, final) // stored block
		out = binary.LittleEndian.AppendUint16(out, uint16(n))
		out = binary.LittleEndian.AppendUint16(out, ^uint16(n))
		out = out[:len(out)+n] // zero bytes: make zeroed the capacity
	}
	out = be.AppendUint32(out, uint32(raw%65521)<<16|1) // Adler-32 of raw zero bytes
	out = be.AppendUint32(out, crc32.ChecksumIEEE(out[idat:]))
	return appendChunk(out, "IEND", nil)
})

func appendChunk(dst []byte, kind string, data []byte) []byte {
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(len(data)))
	start := len(dst)
	dst = append(dst, kind...)
	dst = append(dst, data...)
	return be.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}

// bigImageBase64 is BigImage in base64, made once per process. Runs of
// zero bytes are copied as runs of 'A' instead of encoded (see bigImage).
var bigImageBase64 = sync.OnceValue(func() []byte {
	const chunk = 3 * 1024 // whole base64 quanta
	src := bigImage()
	zero := make([]byte, chunk)
	zeroB64 := bytes.Repeat([]byte("A"), base64.StdEncoding.EncodedLen(chunk))
	dst := make([]byte, 0, base64.StdEncoding.EncodedLen(len(src)))
	for len(src) > 0 {
		n := min(len(src), chunk)
		if n == chunk && bytes.Equal(src[:n], zero) {
			dst = append(dst, zeroB64...)
		} else {
			dst = base64.StdEncoding.AppendEncode(dst, src[:n])
		}
		src = src[n:]
	}
	return dst
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
