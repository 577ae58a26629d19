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

// appIcon draws the app icon: a bell-blue rounded square with a white dot, the "tiding".
func appIcon(size int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	bg := color.RGBA{0x25, 0x63, 0xeb, 0xff}
	r := float64(size) * 0.22
	c := float64(size) / 2
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			fx, fy := float64(x)+0.5, float64(y)+0.5
			if !inRoundedSquare(fx, fy, float64(size), r) {
				continue
			}
			img.Set(x, y, bg)
			dx, dy := fx-c, fy-c*1.05
			if dx*dx+dy*dy < (c*0.42)*(c*0.42) {
				img.Set(x, y, color.White)
			}
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
