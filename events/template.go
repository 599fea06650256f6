package events

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"fieldkit/store"
)

// Template is a webhook's URL, headers or body with {{ expression }} substitutions.
// It is deliberately not a template language: an expression is a path into the event's
// context (data.device.name, data['device']['name'], data.tags[0].slug) with filters
// (| tojson, | lower, | upper, | default('x')), and nothing in a template can run code,
// loop, call a method or read anything but the context. {% %} blocks are refused when
// the webhook is saved. A path that leads nowhere renders empty, as Jinja2's undefined
// does; a string renders as itself, a number as written, true/false/null as Python
// prints them (True, False, None), an object or a list as JSON.
type Template struct {
	parts []part
}

type part struct {
	text    string // literal text, when path is nil
	path    []any  // keys (string) and indexes (int)
	filters []filter
	expr    bool
}

type filter struct {
	name string
	arg  string
}

// MaxRendered bounds what a template may render (a body), in bytes.
const MaxRendered = 1 << 20

// ParseTemplate compiles a template; the error is the client's message.
func ParseTemplate(src string) (*Template, error) {
	t := &Template{}
	for rest := src; rest != ""; {
		if i := strings.Index(rest, "{%"); i >= 0 && (!strings.Contains(rest, "{{") || i < strings.Index(rest, "{{")) {
			return nil, store.Problem("Only {{ variable }} substitutions are supported: {% %} blocks (loops, conditions) are not.")
		}
		i := strings.Index(rest, "{{")
		if i < 0 {
			t.parts = append(t.parts, part{text: rest})
			break
		}
		if i > 0 {
			t.parts = append(t.parts, part{text: rest[:i]})
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return nil, store.Problem("A {{ is not closed by }}.")
		}
		p, err := parseExpr(strings.TrimSpace(rest[i+2 : i+j]))
		if err != nil {
			return nil, err
		}
		t.parts = append(t.parts, p)
		rest = rest[i+j+2:]
	}
	return t, nil
}

// parseExpr reads `path | filter | filter(arg)`.
func parseExpr(src string) (part, error) {
	pieces := strings.Split(src, "|")
	path, err := parsePath(strings.TrimSpace(pieces[0]))
	if err != nil {
		return part{}, err
	}
	p := part{path: path, expr: true}
	for _, f := range pieces[1:] {
		f = strings.TrimSpace(f)
		name, arg := f, ""
		if k := strings.Index(f, "("); k >= 0 && strings.HasSuffix(f, ")") {
			name, arg = strings.TrimSpace(f[:k]), strings.TrimSpace(f[k+1:len(f)-1])
			s, ok := unquote(arg)
			if !ok {
				return part{}, store.Problem(fmt.Sprintf("The argument of %s must be a quoted string.", name))
			}
			arg = s
		}
		switch name {
		case "tojson", "lower", "upper", "default":
		default:
			return part{}, store.Problem(fmt.Sprintf("Unknown filter %q: use tojson, lower, upper or default('text').", name))
		}
		p.filters = append(p.filters, filter{name, arg})
	}
	return p, nil
}

// parsePath reads a.b['c'][0].
func parsePath(s string) ([]any, error) {
	bad := store.Problem(fmt.Sprintf("%q is not a variable: write a path such as data.device.name or data['device']['name'].", s))
	var out []any
	for s != "" {
		switch {
		case s[0] == '[':
			end := strings.Index(s, "]")
			if end < 0 {
				return nil, bad
			}
			inner := strings.TrimSpace(s[1:end])
			if key, ok := unquote(inner); ok {
				out = append(out, key)
			} else if n, err := strconv.Atoi(inner); err == nil {
				out = append(out, n)
			} else {
				return nil, bad
			}
			s = s[end+1:]
		case s[0] == '.' && len(out) > 0:
			s = s[1:]
			if s == "" || s[0] == '.' || s[0] == '[' {
				return nil, bad
			}
		default:
			n := strings.IndexAny(s, ".[")
			if n < 0 {
				n = len(s)
			}
			name := s[:n]
			if !identifier(name) {
				return nil, bad
			}
			out = append(out, name)
			s = s[n:]
		}
	}
	if len(out) == 0 {
		return nil, bad
	}
	return out, nil
}

func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !(r >= 'a' && r <= 'z') && !(r >= 'A' && r <= 'Z') && (i == 0 || !(r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

func unquote(s string) (string, bool) {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1], true
	}
	return "", false
}

// Render substitutes the context.
func (t *Template) Render(ctx map[string]any) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if !p.expr {
			b.WriteString(p.text)
		} else {
			b.WriteString(p.eval(ctx))
		}
		if b.Len() > MaxRendered {
			return "", fmt.Errorf("events: template renders more than %d bytes", MaxRendered)
		}
	}
	return b.String(), nil
}

func (p part) eval(ctx map[string]any) string {
	v, found := lookup(ctx, p.path)
	out := ""
	asJSON := false
	for _, f := range p.filters {
		switch f.name {
		case "default":
			if !found || v == nil || v == "" {
				v, found = f.arg, true
			}
		case "tojson":
			asJSON = true
		}
	}
	if asJSON {
		raw, _ := json.Marshal(v)
		out = string(raw)
	} else if found {
		out = show(v)
	}
	for _, f := range p.filters {
		switch f.name {
		case "lower":
			out = strings.ToLower(out)
		case "upper":
			out = strings.ToUpper(out)
		}
	}
	return out
}

func lookup(v any, path []any) (any, bool) {
	for _, k := range path {
		switch key := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[key]; !ok {
				return nil, false
			}
		case int:
			l, ok := v.([]any)
			if !ok || key < 0 || key >= len(l) {
				return nil, false
			}
			v = l[key]
		}
	}
	return v, true
}

// show is a value as Jinja2 prints it, objects and lists as JSON.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}
