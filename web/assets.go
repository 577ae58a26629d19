package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"math"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var staticFS embed.FS

// asset is one static file, served under a name that contains its content hash so
// that it can be cached for a year and still change with every release.
type asset struct {
	body        []byte
	contentType string
}

type assets struct {
	byHashed map[string]*asset // "app.3f2a9c1e.js" → file
	hashed   map[string]string // "app.js" → "/static/app.3f2a9c1e.js"
	raw      map[string]*asset // "sw.js" → file (served at a fixed URL)
}

func loadAssets() (*assets, error) {
	a := &assets{byHashed: map[string]*asset{}, hashed: map[string]string{}, raw: map[string]*asset{}}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		a.add(path.Base(p), b)
		return nil
	})
	for _, size := range []int{192, 512} {
		a.add("icon-"+itoa(size)+".png", appIcon(size))
	}
	return a, err
}

func (a *assets) add(name string, b []byte) {
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	f := &asset{body: b, contentType: ct}
	sum := sha256.Sum256(b)
	ext := path.Ext(name)
	hashedName := strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:4]) + ext
	a.byHashed[hashedName] = f
	a.hashed[name] = "/static/" + hashedName
	a.raw[name] = f
}

// url is the template function "asset": the hashed URL of a static file.
func (a *assets) url(name string) string {
	if u, ok := a.hashed[name]; ok {
		return u
	}
	panic("web: no static file " + name)
}

func (s *Server) static(w http.ResponseWriter, r *http.Request) error {
	f, ok := s.assets.byHashed[r.PathValue("file")]
	if !ok {
		return errNotFound
	}
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Write(f.body)
	return nil
}

// serviceWorker is served from the root so that its scope is the whole dashboard; push
// notifications need it. It must not be cached for long: browsers check it for updates.
func (s *Server) serviceWorker(w http.ResponseWriter, r *http.Request) error {
	f := s.assets.raw["sw.js"]
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	// Notifications show the app icon, whose URL carries its hash.
	w.Write(bytes.ReplaceAll(f.body, []byte("/static/icon-192.png"), []byte(s.assets.url("icon-192.png"))))
	return nil
}

func (s *Server) manifest(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/manifest+json")
	w.Header().Set("Cache-Control", "no-cache")
	return s.pages.raw.ExecuteTemplate(w, "manifest", nil)
}

// appIcon draws the app icon as icon.svg draws the logo: a blue rounded square, a
// white dot (the news) and two waves (the tide), at any size for the PWA icons.
func appIcon(size int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	bg := color.RGBA{0x25, 0x63, 0xeb, 0xff}
	soft := color.RGBA{0xa8, 0xc1, 0xf7, 0xff} // white at 55% over the blue
	scale := float64(size) / 64
	r := 14 * scale
	wave := func(x, y, base float64) bool {
		if x < 10-2.5 || x > 54+2.5 {
			return false
		}
		cx := min(max(x, 10), 54) // round caps at both ends
		w := base - 3.5*math.Sin(math.Pi*(cx-10)/11)
		dx, dy := x-cx, y-w
		return dx*dx+dy*dy < 2.5*2.5
	}
	at := func(fx, fy float64) color.RGBA {
		if !inRoundedSquare(fx, fy, float64(size), r) {
			return color.RGBA{}
		}
		X, Y := fx/scale, fy/scale
		switch {
		case (X-44)*(X-44)+(Y-21)*(Y-21) < 7*7, wave(X, Y, 40):
			return color.RGBA{0xff, 0xff, 0xff, 0xff}
		case wave(X, Y, 51):
			return soft
		}
		return bg
	}
	const n = 4 // samples per side: smooth edges
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			var sr, sg, sb, sa int
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					c := at(float64(x)+(float64(i)+0.5)/n, float64(y)+(float64(j)+0.5)/n)
					sr, sg, sb, sa = sr+int(c.R), sg+int(c.G), sb+int(c.B), sa+int(c.A)
				}
			}
			img.Set(x, y, color.RGBA{uint8(sr / (n * n)), uint8(sg / (n * n)), uint8(sb / (n * n)), uint8(sa / (n * n))})
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

func inRoundedSquare(x, y, size, r float64) bool {
	cx := min(max(x, r), size-r)
	cy := min(max(y, r), size-r)
	return (x-cx)*(x-cx)+(y-cy)*(y-cy) <= r*r
}
