package handlers

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fieldkit/web"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	swagger "github.com/swaggest/swgui/v5/static"
)

// The API readers, both served from assets in the binary so they work with no internet
// access: Swagger UI at /api/docs/ (the swgui module's embedded swagger-ui files, with a
// page of our own) and a plain reference at /api/redoc/ (assets/redoc, vanilla JS).

//go:embed assets/docs assets/redoc
var readerAssets embed.FS

// docsPage answers /api/docs/. ?format=openapi answers the schema itself, which older
// pynetbox versions fetch from here.
func (a *API) docsPage(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Get("format") != "" {
		return a.serveSchema(w, r)
	}
	return serveAsset(w, r, readerAssets, "assets/docs/index.html")
}

// docsAsset serves our start-up script, then swagger-ui's files (stored gzipped by swgui).
func (a *API) docsAsset(w http.ResponseWriter, r *http.Request) error {
	name := web.Param(r, "file")
	if name == "index.html" || strings.ContainsAny(name, `/\`) {
		return web.NotFound()
	}
	if _, err := fs.Stat(readerAssets, "assets/docs/"+name); err == nil {
		return serveAsset(w, r, readerAssets, "assets/docs/"+name)
	}
	if _, err := fs.Stat(swagger.FS, name+".gz"); err == nil {
		return serveGzipped(w, r, swagger.FS, name)
	}
	if strings.HasSuffix(name, ".png") {
		return serveAsset(w, r, swagger.FS, name)
	}
	return web.NotFound()
}

// redocPage and redocAsset serve the reference page.
func (a *API) redocPage(w http.ResponseWriter, r *http.Request) error {
	return serveAsset(w, r, readerAssets, "assets/redoc/index.html")
}

func (a *API) redocAsset(w http.ResponseWriter, r *http.Request) error {
	name := web.Param(r, "file")
	if name == "index.html" || strings.ContainsAny(name, `/\`) {
		return web.NotFound()
	}
	return serveAsset(w, r, readerAssets, "assets/redoc/"+name)
}

func contentType(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func serveAsset(w http.ResponseWriter, r *http.Request, fsys fs.FS, name string) error {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return web.NotFound()
	}
	w.Header().Set("Content-Type", contentType(name))
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", readerCSP)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
	return nil
}

// readerCSP keeps the readers on this origin: nothing is fetched from elsewhere.
// swagger-ui needs inline styles; our pages need no inline script.
const readerCSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'"

// serveGzipped sends name.gz as is to clients that accept gzip, else decompressed.
func serveGzipped(w http.ResponseWriter, r *http.Request, fsys fs.FS, name string) error {
	b, err := fs.ReadFile(fsys, name+".gz")
	if err != nil {
		return web.NotFound()
	}
	w.Header().Set("Content-Type", contentType(name))
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Header().Add("Vary", "Accept-Encoding")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(b)
		return nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return err
	}
	_, _ = io.Copy(w, zr) // a client gone mid-write is not our error
	return nil
}
