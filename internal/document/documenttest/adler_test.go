package documenttest

import (
	"bytes"
	"hash/adler32"
	"testing"
)

// The combined sum is the checksum of the whole, over enough blocks for
// both halves to wrap the modulus.
func TestAdler32Combine(t *testing.T) {
	for _, blocks := range []int{1, 2, 3, 70} {
		chunk := bytes.Repeat([]byte("0 "), block/2)
		whole := adler32.New()
		sum := uint32(1)
		for range blocks {
			whole.Write(chunk)
			sum = adler32Combine(sum, adler32.Checksum(chunk), block)
		}
		if sum != whole.Sum32() {
			t.Errorf("%d blocks: combined %08x, whole %08x", blocks, sum, whole.Sum32())
		}
	}
}
