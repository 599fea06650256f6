// Package variables validates execution-time variable values and substitutes them into
// a command's text. Substitution is single-pass: a value that itself contains
// "<name>" stays literal, and no value may carry a control character that would make
// the device run a second command. A value can never change what the command does
// beyond the value itself: it matches its variable's pattern, or else holds none of
// the characters the platform reads as chaining, piping, redirecting or substituting
// commands; and where the platform's commands go through a shell, every value is
// quoted for it.
package variables

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxLen is the longest value accepted.
const MaxLen = 500

// Variable is a command's variable as validation needs it.
type Variable struct {
	Name     string
	Type     string // text, inventory_interface, inventory_vlan, inventory_vlan_name, inventory_ip
	Required bool
	Default  string
	// Pattern, when set, must match the whole value (the caller compiled it anchored);
	// it then replaces the platform's rule on unsafe characters.
	Pattern *regexp.Regexp
}

// Rules are what the device's platform lets a value carry (exec.ValueRulesFor).
type Rules struct {
	// Unsafe are the characters a value without a pattern may not hold.
	Unsafe string
	// OptionPrefix, when set, may not start a value without a pattern: the command
	// would read it as an option ("-", for a shell).
	OptionPrefix string
	// Quote, when set, returns a (non-empty) value as it must be written at byte offset
	// at of the command text; nil writes it as is.
	Quote func(text string, at int, value string) string
}

// Placeholder matches a variable placeholder; text in angle brackets that is not a
// valid name ("<cr>", "<1-4094>") is not one.
var Placeholder = regexp.MustCompile(`<([A-Za-z][A-Za-z0-9_]*)>`)

// Errors maps a variable name to its messages.
type Errors map[string][]string

func (e Errors) add(name, msg string) { e[name] = append(e[name], msg) }

// Render checks values against vars (choices holds the allowed values of inventory
// variables, by variable name) and the platform's rules, and returns the command with
// the values substituted: the text sent to the device. values come from a JSON body:
// strings, or numbers (converted to their decimal text). used are the values each
// variable took (a default included), for the record.
func Render(command string, vars []Variable, values map[string]json.RawMessage, choices map[string][]string, rules Rules) (text string, used map[string]string, errs Errors) {
	errs = Errors{}
	byName := map[string]Variable{}
	for _, v := range vars {
		byName[v.Name] = v
	}
	for name := range values {
		if _, ok := byName[name]; !ok {
			errs.add(name, "Unknown variable: this command has no such variable.")
		}
	}
	final := map[string]string{}
	for _, v := range vars {
		raw, sent := values[v.Name]
		val, ok := "", false
		if sent && string(raw) != "null" {
			s, isText := asString(raw)
			if !isText {
				errs.add(v.Name, "Must be a string or a number.")
				continue
			}
			val, ok = s, s != ""
		}
		if !ok {
			if v.Default == "" {
				if v.Required {
					errs.add(v.Name, "This variable is required.")
				}
				final[v.Name] = ""
				continue
			}
			val = v.Default
		}
		if msg := check(v, val, choices[v.Name], rules); msg != "" {
			errs.add(v.Name, msg)
			continue
		}
		final[v.Name] = val
	}
	if len(errs) > 0 {
		return "", nil, errs
	}
	var b strings.Builder
	last := 0
	for _, m := range Placeholder.FindAllStringSubmatchIndex(command, -1) {
		v, ok := final[command[m[2]:m[3]]]
		if !ok {
			continue
		}
		b.WriteString(command[last:m[0]])
		if rules.Quote != nil && v != "" { // an optional variable left out stays out
			v = rules.Quote(command, m[0], v)
		}
		b.WriteString(v)
		last = m[1]
	}
	b.WriteString(command[last:])
	return b.String(), final, nil
}

// asString reads a variable's value: a string, or a number as its decimal text.
func asString(raw json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if i, err := n.Int64(); err == nil {
			return strconv.FormatInt(i, 10), true
		}
		if f, err := n.Float64(); err == nil {
			return strconv.FormatFloat(f, 'f', -1, 64), true
		}
	}
	return "", false
}

func check(v Variable, val string, allowed []string, rules Rules) string {
	if !utf8.ValidString(val) {
		return "Must be valid UTF-8 text."
	}
	if utf8.RuneCountInString(val) > MaxLen {
		return fmt.Sprintf("Ensure this value has no more than %d characters.", MaxLen)
	}
	for _, r := range val {
		if r < 0x20 || r == 0x7f {
			return "Control characters (such as newlines) are not allowed: they would send a second command to the device."
		}
	}
	if msg := checkSafe(v, val, rules); msg != "" {
		return msg
	}
	if v.Type == "" || v.Type == "text" {
		return ""
	}
	for _, a := range allowed {
		if a == val {
			return ""
		}
	}
	return fmt.Sprintf("%q is not one of this device's choices for %s.", val, v.Name)
}

// checkSafe holds a value to its variable's pattern, or else to the platform's rules:
// every variable type, since an inventory value (an interface name) is written by
// whoever may edit the inventory, not by whoever may run the command.
func checkSafe(v Variable, val string, rules Rules) string {
	if v.Pattern != nil {
		if !v.Pattern.MatchString(val) {
			return fmt.Sprintf("Does not match the variable's pattern: %s", strings.TrimSuffix(strings.TrimPrefix(v.Pattern.String(), "^(?:"), ")$"))
		}
		return ""
	}
	if i := strings.IndexAny(val, rules.Unsafe); i >= 0 {
		r, _ := utf8.DecodeRuneInString(val[i:])
		return fmt.Sprintf("%q is not allowed here: on this platform it could chain, pipe, redirect or substitute commands. "+
			"A pattern on the variable may allow it.", string(r))
	}
	if rules.OptionPrefix != "" && strings.HasPrefix(val, rules.OptionPrefix) {
		return fmt.Sprintf("A value may not start with %q here: the command would read it as an option. "+
			"A pattern on the variable may allow it.", rules.OptionPrefix)
	}
	return ""
}
