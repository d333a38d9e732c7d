package tokens

import (
	"bytes"
	"image"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

// TestImageSizeAgreesWithTheDecoders: the header reader finds the size
// image.DecodeConfig finds, for every format and several sizes, and
// nothing in what is not an image.
func TestImageSizeAgreesWithTheDecoders(t *testing.T) {
	t.Parallel()
	encoders := map[string]func(*bytes.Buffer, image.Image) error{
		"png":  func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) },
		"jpeg": func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) },
		"progressive-ish jpeg": func(b *bytes.Buffer, m image.Image) error {
			return jpeg.Encode(b, m, &jpeg.Options{Quality: 10})
		},
		"gif": func(b *bytes.Buffer, m image.Image) error { return gif.Encode(b, m, nil) },
	}
	for name, enc := range encoders {
		for _, size := range [][2]int{{1, 1}, {100, 50}, {1024, 1024}, {2048, 4096}, {513, 7}} {
			var buf bytes.Buffer
			img := image.NewPaletted(image.Rect(0, 0, size[0], size[1]), palette.Plan9)
			if err := enc(&buf, img); err != nil {
				t.Fatal(err)
			}
			cfg, _, err := image.DecodeConfig(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			w, h, ok := ImageSize(buf.Bytes())
			if !ok || w != cfg.Width || h != cfg.Height {
				t.Errorf("%s %v: ImageSize = %d×%d %v, DecodeConfig %d×%d", name, size, w, h, ok, cfg.Width, cfg.Height)
			}
			// A truncated header is not an image.
			for _, cut := range []int{1, 3, 9, 20} {
				if cut < buf.Len() {
					if _, _, ok := ImageSize(buf.Bytes()[:cut]); ok && name != "gif" && name != "png" {
						t.Errorf("%s cut at %d: ok", name, cut)
					}
				}
			}
		}
	}
	for _, junk := range [][]byte{nil, []byte("not an image"), {0xff, 0xd8, 0xff}, []byte("%PDF-1.7")} {
		if _, _, ok := ImageSize(junk); ok {
			t.Errorf("ImageSize(%q) = ok", junk)
		}
	}
}
