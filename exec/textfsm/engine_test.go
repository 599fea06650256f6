package textfsm

import (
	"reflect"
	"strings"
	"testing"
)

// parseWith compiles one template and parses output with it.
func parseWith(t *testing.T, tmpl, output string) []map[string]any {
	t.Helper()
	c, err := Compile("test.textfsm", tmpl)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	data, err := c.Parse(output)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return data
}

type rec = map[string]any

// TestPythonSemantics checks behaviour where Go's RE2 or gotextfsm give
// another answer than Python's textfsm; each expected result is what
// Python's textfsm with clitable returns for the same template and text.
func TestPythonSemantics(t *testing.T) {
	tests := []struct {
		name, tmpl, output string
		want               []rec
	}{{
		name:   "a lookbehind",
		tmpl:   "Value A ((?<=id )\\d+)\n\nStart\n  ^.*?${A} -> Record\n",
		output: "port 7 id 42\n",
		want:   []rec{{"a": "42"}},
	}, {
		name:   "{,n} is {0,n}, not a literal",
		tmpl:   "Value A (\\S+)\n\nStart\n  ^\\s{,4}${A}$$ -> Record\n",
		output: "    x\n      y\n",
		want:   []rec{{"a": "x"}},
	}, {
		name:   "\\s matches a no-break space and \\x1f",
		tmpl:   "Value A (\\S+)\n\nStart\n  ^a\\s${A} -> Record\n",
		output: "a\u00a0one\na\x1ftwo\n",
		want:   []rec{{"a": "one"}, {"a": "two"}},
	}, {
		name:   "\\w and \\b are Unicode-aware",
		tmpl:   "Value A (\\w+)\n\nStart\n  ^${A}\\b -> Record\n",
		output: "Zürich²x\n",
		want:   []rec{{"a": "Zürich²x"}},
	}, {
		name:   "a set mixing \\S with a space",
		tmpl:   "Value A ([\\S ]+?)\n\nStart\n  ^<${A}>$$ -> Record\n",
		output: "<two words>\n",
		want:   []rec{{"a": "two words"}},
	}, {
		name:   "a set mixing \\S with a space leaves out a no-break space, not an emoji",
		tmpl:   "Value A ([\\S ]+)\n\nStart\n  ^${A}$$ -> Record\n",
		output: "a b\nc\u00a0d\n\U0001F600 x\n",
		want:   []rec{{"a": "a b"}, {"a": "\U0001F600 x"}},
	}, {
		name:   "\\Z and a repeat over 1000",
		tmpl:   "Value A (x{1001})\n\nStart\n  ^${A}\\Z -> Record\n",
		output: strings.Repeat("x", 1001) + "\n",
		want:   []rec{{"a": strings.Repeat("x", 1001)}},
	}, {
		name:   "a named back-reference",
		tmpl:   "Value A (\\w+)\n\nStart\n  ^${A}=(?P=A)$$ -> Record\n",
		output: "ab=ab\nab=cd\n",
		want:   []rec{{"a": "ab"}},
	}, {
		name:   "re.match anchors every alternative at the start",
		tmpl:   "Value A (\\d+)\n\nStart\n  ^x|${A} -> Record\n",
		output: "port 5\n",
		want:   []rec{},
	}, {
		name:   "spaces inside a Value regex are kept as written",
		tmpl:   "Value A (a  b)\n\nStart\n  ^${A} -> Record\n",
		output: "a b\na  b\n",
		want:   []rec{{"a": "a  b"}},
	}, {
		name:   "a matched empty string is a value, None is not",
		tmpl:   "Value A (\\S*)\nValue B (\\d+)\n\nStart\n  ^x${A}(?: ${B})?$$ -> Record\n",
		output: "x\nxy 1\n",
		want:   []rec{{"a": "", "b": ""}, {"a": "y", "b": "1"}},
	}, {
		name:   "a List's items: strings, and None as the text None",
		tmpl:   "Value List A (\\d+)\n\nStart\n  ^n(?: ${A})?$$\n  ^end -> Record\n",
		output: "n 1\nn\nn 2\nend\n",
		want:   []rec{{"a": []string{"1", "None", "2"}}},
	}, {
		name:   "a List with named groups holds each dict as Python prints it",
		tmpl:   "Value List P ((?P<name>\\w+):(?P<age>\\d+)?)\n\nStart\n  ^${P}\n",
		output: "bob:32\nann:\n",
		want:   []rec{{"p": []string{"{'name': 'bob', 'age': '32'}", "{'name': 'ann', 'age': None}"}}},
	}, {
		name:   "a non-List Value with named groups is a plain string",
		tmpl:   "Value P ((?P<name>\\w+):(?P<age>\\d+))\n\nStart\n  ^${P} -> Record\n",
		output: "bob:32\n",
		want:   []rec{{"p": "bob:32"}},
	}, {
		name: "Filldown, Required, Fillup",
		tmpl: "Value Filldown VRF (\\S+)\nValue Required IP (\\S+)\nValue Fillup AGE (\\d+)\n\nStart\n" +
			"  ^vrf ${VRF}\n  ^ip ${IP} -> Record\n  ^age ${AGE}\n",
		output: "vrf red\nip 1\nip 2\nage 9\nvrf blue\nip 3\n",
		want:   []rec{{"vrf": "red", "ip": "1", "age": "9"}, {"vrf": "red", "ip": "2", "age": "9"}, {"vrf": "blue", "ip": "3", "age": "9"}},
	}, {
		name: "Continue, Clearall and an explicit EOF state",
		tmpl: "Value Filldown H (\\S+)\nValue V (\\S+)\n\nStart\n  ^h ${H}\n  ^v ${V} -> Continue\n  ^v \\S+ x -> Record\n" +
			"  ^reset -> Clearall\n\nEOF\n",
		output: "h a\nv 1 x\nv 2\nreset\nv 3 x\nv 4\n",
		want:   []rec{{"h": "a", "v": "1"}, {"h": "", "v": "3"}},
	}, {
		name:   "str.splitlines: \\r alone and \\f end a line",
		tmpl:   "Value A (\\S+)\n\nStart\n  ^${A}$$ -> Record\n",
		output: "one\rtwo\r\nthree\ffour",
		want:   []rec{{"a": "one"}, {"a": "two"}, {"a": "three"}, {"a": "four"}},
	}, {
		name:   "End stops before the implicit record",
		tmpl:   "Value A (\\S+)\n\nStart\n  ^stop -> End\n  ^${A}\n",
		output: "x\nstop\ny\n",
		want:   []rec{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseWith(t, tt.tmpl, tt.output)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// TestTemplateErrors checks that what Python's textfsm refuses to load is
// refused, with its reason.
func TestTemplateErrors(t *testing.T) {
	tests := []struct{ tmpl, want string }{
		{"Value Bogus A (x)\n\nStart\n  ^${A}\n", `unknown option "Bogus"`},
		{"Value A (x\n\nStart\n  ^${A}\n", "must be contained within a '()' pair"},
		{"Value A (x)\n\nBegin\n  ^${A}\n", "missing state 'Start'"},
		{"Value A (x)\n\nStart\n  ^${B}\n", "invalid variable substitution"},
		{"Value A (x)\n\nStart\n  ^${A} -> Next Nowhere\n", `state "Nowhere" not found`},
		{"Value A (x)\n\nStart\n  ^${A} -> Continue Other\n", "with new state"},
		{"Value A (x)\n\nStart\n   ^${A}\n", "missing white space or carat"},
		{"Value A ((?<x>a))\n\nStart\n  ^${A}\n", "unknown extension"},
		{"Value A (x)\nValue A (y)\n\nStart\n  ^${A}\n", "duplicate declarations"},
		{"Value A (x)\n\nStart\n  ^${A}${A}\n", "redefinition of group name"},
		{"Value A (\\q)\n\nStart\n  ^${A}\n", `bad escape \q`},
		{"Value A (x)\n\nStart\n  ^${A}\n\nEOF\n  ^x\n", "non-empty 'EOF' state"},
	}
	for _, tt := range tests {
		_, err := Compile("bad.textfsm", tt.tmpl)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want an error containing %q", tt.tmpl, err, tt.want)
		}
	}
}

func TestErrorAction(t *testing.T) {
	c, err := Compile("strict.textfsm", "Value A (\\d+)\n\nStart\n  ^${A} -> Record\n  ^. -> Error \"unexpected\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Parse("1\n2\noops\n"); err == nil || !strings.Contains(err.Error(), `"unexpected"`) {
		t.Errorf("got %v", err)
	}
	if data, err := c.Parse("1\n2\n"); err != nil || len(data) != 2 {
		t.Errorf("the failed parse left state behind: %v %v", data, err)
	}
}

// TestRequiredText checks the text a line must contain before a rule's regex runs:
// only what every match holds, never a case-folded or optional part.
func TestRequiredText(t *testing.T) {
	for _, tt := range []struct{ re, want string }{
		{`\A(?:^\s*Cisco IOS Software, (?P<SOFTWARE>.+), Version (?P<VERSION>\S+))`, "Cisco IOS Software, "},
		{`\A(?:(?P<UPTIME>\S+) uptime is (?P<DAYS>\d+) days?)`, " uptime is "},
		{`\A(?:(?i)interface (?P<NAME>\S+))`, ""},
		{`\A(?:(?:optional text)?\s+(?P<X>\d+))`, ""},
		{`\A(?:(?:Gi|Te)(?P<PORT>\S+))`, ""},
		{`\A(?:(?:-+)+$)`, "-"},
		{`\A(?:^$)`, ""},
		{`\A(?:(`, ""},
		{"\\A(?:bad \uFFFD byte)", ""},
	} {
		if got := requiredText(tt.re); got != tt.want {
			t.Errorf("requiredText(%q) = %q, want %q", tt.re, got, tt.want)
		}
	}
	// A line without the text is refused as the engine would refuse it, and one with
	// it still goes to the engine.
	p, err := compilePy(`^\s*Cisco IOS Software, (?P<V>.+)`)
	if err != nil {
		t.Fatal(err)
	}
	var runes []rune
	for line, want := range map[string]bool{"  Cisco IOS Software, 15.2": true, "Cisco IOS Software": false, "x Cisco IOS Software, y": false} {
		if _, ok, err := p.find(line, &runes); err != nil || ok != want {
			t.Errorf("find(%q) = %v (%v), want %v", line, ok, err, want)
		}
	}
}
