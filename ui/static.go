package ui

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fieldkit/web"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// contentTypes are the asset types the pages use, fixed here rather than read from the
// host's mime tables, which differ between Linux distributions and Windows.
var contentTypes = map[string]string{
	".html":  "text/html; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".mjs":   "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".json":  "application/json",
	".map":   "application/json",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".ico":   "image/x-icon",
	".webp":  "image/webp",
	".woff2": "font/woff2",
	".txt":   "text/plain; charset=utf-8",
}

func contentType(name string) string {
	ext := path.Ext(name)
	if ct, ok := contentTypes[ext]; ok {
		return ct
	}
	if ct := mime.TypeByExtension(ext); ct != "" {
		return ct
	}
	return "application/octet-stream"
}

// page answers a page path with index.html: the pages route on the client. It is never
// cached, so an upgraded binary's pages load at once.
func (u *UI) page(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Cache-Control", "no-cache")
	return u.serveFile(w, r, "index.html")
}

// asset answers /ui/static/<name>. File names are not fingerprinted, so the browser keeps
// a copy but revalidates it each time (ETag → 304): an upgrade never leaves old scripts
// behind a new index.html, and an unchanged asset costs no transfer.
func (u *UI) asset(w http.ResponseWriter, r *http.Request) error {
	name := strings.TrimPrefix(web.Param(r, "file"), "/")
	if name == "" || !fs.ValidPath(name) {
		return web.NotFound()
	}
	w.Header().Set("Cache-Control", "public, no-cache")
	return u.serveFile(w, r, name)
}

func (u *UI) serveFile(w http.ResponseWriter, r *http.Request, name string) error {
	body, err := fs.ReadFile(u.static, name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || isDir(u.static, name) {
		w.Header().Set("Cache-Control", "no-store")
		return web.NotFound()
	}
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
	w.Header().Set("Content-Type", contentType(name))
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
	return nil
}

func isDir(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && st.IsDir()
}
