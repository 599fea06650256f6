package exec

import (
	"strings"
	"testing"
)

// A value is written for the shell according to the quotes open where its placeholder
// sits, so that the shell reads back exactly the value.
func TestShellQuote(t *testing.T) {
	for _, c := range []struct{ text, value, want string }{
		{"echo <v>", "hi; id", `echo 'hi; id'`},
		{"echo <v>", "it's", `echo 'it'\''s'`},
		{`echo "<v>"`, "$(id) `id` \"x\" \\", `echo "\$(id) \` + "`" + `id\` + "`" + ` \"x\" \\"`},
		{`echo '<v>'`, "it's $x", `echo 'it'\''s $x'`},
		{`echo "it's" <v>`, "*", `echo "it's" '*'`},
		{`echo \" <v>`, "*", `echo \" '*'`},
		{`echo '\' <v>`, "*", `echo '\' '*'`},
		{"echo <v>", "", "echo "},
	} {
		at := strings.Index(c.text, "<v>")
		got := c.text[:at] + shellQuote(c.text, at, c.value) + c.text[at+3:]
		if got != c.want {
			t.Errorf("%s with %q: %s, want %s", c.text, c.value, got, c.want)
		}
	}
}

// Every driver refuses the characters that chain, pipe or redirect; the linux driver
// quotes, and an interactive CLI refuses "?" (help at once), RouterOS its brackets.
func TestValueRules(t *testing.T) {
	for _, name := range Drivers() {
		r := ValueRulesFor(name)
		for _, c := range "|;&`$<>\\" {
			if !strings.ContainsRune(r.Unsafe, c) {
				t.Errorf("%s lets %q through", name, c)
			}
		}
		if (r.Quote != nil) != (name == "linux") || (r.OptionPrefix == "-") != (name == "linux") {
			t.Errorf("%s: quote %v, option prefix %q", name, r.Quote != nil, r.OptionPrefix)
		}
		if name != "linux" && !strings.Contains(r.Unsafe, "?") {
			t.Errorf("%s lets ? through", name)
		}
	}
	if !strings.Contains(ValueRulesFor("mikrotik_routeros").Unsafe, "[") {
		t.Error("RouterOS lets [ through")
	}
	if ValueRulesFor("no such driver").Unsafe != ValueRulesFor("generic").Unsafe {
		t.Error("an unknown driver does not get generic's rules")
	}
}
