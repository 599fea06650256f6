package ui

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestStatusColoursWrittenOnce: a status word's colour is chosen in one place, dom.js's
// statusKinds, so a device offline, a hub site offline and a run cancelled read alike on
// every page. A page that maps a status word to a colour class by itself ('completed' ?
// 'ok', { online: 'ok' }, badge('active', 'ok')) fails here; and a cancelled run is grey,
// neither the green nor the red of the stylesheet.
func TestStatusColoursWrittenOnce(t *testing.T) {
	dom, err := os.ReadFile(filepath.Join("static", "js", "dom.js"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)const statusKinds = \{(.*?)\};`).FindSubmatch(dom)
	if block == nil {
		t.Fatal("dom.js has no statusKinds")
	}
	kinds := map[string]string{}
	for _, m := range regexp.MustCompile(`(\w+): '(\w*)'`).FindAllSubmatch(block[1], -1) {
		kinds[string(m[1])] = string(m[2])
	}
	for word, want := range map[string]string{"active": "ok", "success": "ok", "failed": "bad", "offline": "bad", "cancelled": "cancelled"} {
		if kinds[word] != want {
			t.Errorf("statusKinds[%s] = %q, want %q", word, kinds[word], want)
		}
	}

	var words []string
	for w := range kinds {
		words = append(words, regexp.QuoteMeta(w))
	}
	alt := strings.Join(words, "|")
	// A status word tested and given a colour class (=== 'failed' ? 'bad'), a badge of one
	// (badge('active', 'ok')), or an object key naming one ({ online: 'ok' }).
	cls := `\s*'(ok|bad|warn|cancelled)\b`
	own := regexp.MustCompile(`==\s*'(` + alt + `)'\s*\?` + cls + `|badge\(\s*'(` + alt + `)'\s*,` + cls + `|[{,]\s*'?(` + alt + `)'?\s*:` + cls)
	files, err := filepath.Glob(filepath.Join("static", "js", "*.js"))
	if err != nil || len(files) < 10 {
		t.Fatalf("the UI's scripts: %v %v", files, err)
	}
	for _, f := range files {
		if filepath.Base(f) == "dom.js" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range own.FindAll(b, -1) {
			t.Errorf("%s colours a status by itself (%s): use statusBadge or statusKind of dom.js", filepath.Base(f), m)
		}
	}

	css, err := os.ReadFile(filepath.Join("static", "style.css"))
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`\.badge\.cancelled\s*\{([^}]*)\}`).FindSubmatch(css)
	if rule == nil {
		t.Fatal("style.css has no .badge.cancelled")
	}
	if r := string(rule[1]); strings.Contains(r, "--ok") || strings.Contains(r, "--bad") {
		t.Errorf(".badge.cancelled is green or red: %s", r)
	}
	for _, k := range []string{"ok", "bad", "warn"} {
		if !strings.Contains(string(css), ".badge."+k+" {") {
			t.Errorf("style.css has no .badge.%s", k)
		}
	}
}
