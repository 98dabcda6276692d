package liveview

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
)

//go:embed page/page.html page/app.js page/app.css
var pageFiles embed.FS

var pageTemplate = template.Must(template.ParseFS(pageFiles, "page/page.html"))

// assetTypes are the page's files served as they are, and their types.
var assetTypes = map[string]string{
	"app.js":  "text/javascript; charset=utf-8",
	"app.css": "text/css; charset=utf-8",
}

// writePage writes the page of an opened link, carrying its session
// secret (read by the page's script, sent back in a header).
func writePage(w http.ResponseWriter, session string, miniApp bool) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, struct {
		Session string
		MiniApp bool
	}{session, miniApp}); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	typ, ok := assetTypes[name]
	if !ok {
		notFound(w)
		return
	}
	b, err := pageFiles.ReadFile("page/" + name)
	if err != nil {
		notFound(w)
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Write(b)
}
