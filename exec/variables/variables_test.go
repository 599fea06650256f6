package variables

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func raw(m map[string]any) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range m {
		b, _ := json.Marshal(v)
		out[k] = b
	}
	return out
}

func TestRender(t *testing.T) {
	vars := []Variable{
		{Name: "iface", Type: "inventory_interface", Required: true},
		{Name: "vlan", Type: "text", Required: false, Default: "1"},
		{Name: "note", Type: "text"},
	}
	choices := map[string][]string{"iface": {"Gi0/1", "Gi0/2"}}
	cmd := "show interface <iface> vlan <vlan> <note> <cr> <1-4094>"
	cases := []struct {
		name   string
		values map[string]any
		want   string
		errKey string
	}{
		{"values and default", map[string]any{"iface": "Gi0/1", "note": "x"}, "show interface Gi0/1 vlan 1 x <cr> <1-4094>", ""},
		{"number converted", map[string]any{"iface": "Gi0/2", "vlan": 20, "note": "y"}, "show interface Gi0/2 vlan 20 y <cr> <1-4094>", ""},
		{"single pass", map[string]any{"iface": "Gi0/1", "note": "<vlan>"}, "show interface Gi0/1 vlan 1 <vlan> <cr> <1-4094>", ""},
		{"missing required", map[string]any{"note": "x"}, "", "iface"},
		{"not a choice", map[string]any{"iface": "Gi0/9"}, "", "iface"},
		{"choice must be exact", map[string]any{"iface": "gi0/1"}, "", "iface"},
		{"newline injection", map[string]any{"iface": "Gi0/1", "note": "x\nreload"}, "", "note"},
		{"carriage return", map[string]any{"iface": "Gi0/1", "note": "x\rreload"}, "", "note"},
		{"NUL", map[string]any{"iface": "Gi0/1", "note": "x\x00"}, "", "note"},
		{"DEL", map[string]any{"iface": "Gi0/1", "note": "x\x7f"}, "", "note"},
		{"too long", map[string]any{"iface": "Gi0/1", "note": strings.Repeat("a", 501)}, "", "note"},
		{"wrong type", map[string]any{"iface": "Gi0/1", "note": true}, "", "note"},
		{"unknown variable", map[string]any{"iface": "Gi0/1", "bogus": "x"}, "", "bogus"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, errs := Render(cmd, vars, raw(c.values), choices, Rules{})
			if c.errKey != "" {
				if _, ok := errs[c.errKey]; !ok {
					t.Fatalf("want an error on %s, got %v", c.errKey, errs)
				}
				return
			}
			if len(errs) > 0 || got != c.want {
				t.Fatalf("got %q %v, want %q", got, errs, c.want)
			}
		})
	}
}

// A value matches its variable's pattern, or else holds none of the platform's unsafe
// characters and does not start with its option prefix; every value, a default too, is
// quoted as the platform says, and the values used are reported.
func TestRenderRules(t *testing.T) {
	rules := Rules{Unsafe: "|;$", OptionPrefix: "-", Quote: func(text string, at int, v string) string {
		return "[" + v + "@" + text[at:at+1] + "]"
	}}
	vars := []Variable{
		{Name: "free", Type: "text", Required: false, Default: "d"},
		{Name: "vlan", Type: "text", Pattern: regexp.MustCompile(`^(?:[0-9]{1,4})$`)},
		{Name: "any", Type: "text", Required: false, Pattern: regexp.MustCompile(`^(?:.*)$`)},
		{Name: "iface", Type: "inventory_interface", Required: false},
	}
	choices := map[string][]string{"iface": {"Gi0/1", "x|y"}}
	for _, c := range []struct {
		values map[string]any
		want   string
		errKey string
	}{
		{map[string]any{"vlan": "10"}, "f [d@<] [10@<]  ", ""},
		{map[string]any{"vlan": "10", "any": "a|b;$c", "free": "ok"}, "f [ok@<] [10@<] [a|b;$c@<] ", ""},
		{map[string]any{"vlan": "10a"}, "", "vlan"},
		{map[string]any{"vlan": "10", "free": "a|b"}, "", "free"},
		{map[string]any{"vlan": "10", "free": "a;b"}, "", "free"},
		{map[string]any{"vlan": "10", "free": "-rf"}, "", "free"},
		{map[string]any{"vlan": "10", "free": "a-b"}, "f [a-b@<] [10@<]  ", ""},
		{map[string]any{"vlan": "10", "iface": "x|y"}, "", "iface"},
		{map[string]any{"vlan": "10", "iface": "Gi0/1"}, "f [d@<] [10@<]  [Gi0/1@<]", ""},
	} {
		got, used, errs := Render("f <free> <vlan> <any> <iface>", vars, raw(c.values), choices, rules)
		if c.errKey != "" {
			if _, ok := errs[c.errKey]; !ok || len(errs) != 1 {
				t.Errorf("%v: want an error on %s alone, got %v", c.values, c.errKey, errs)
			}
			continue
		}
		if len(errs) > 0 || got != c.want {
			t.Errorf("%v: got %q %v, want %q", c.values, got, errs, c.want)
		}
		if used["vlan"] != c.values["vlan"] || used["free"] == "" {
			t.Errorf("%v: used %v", c.values, used)
		}
	}
}
