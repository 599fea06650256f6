// Package variables validates execution-time variable values and substitutes them into
// a command's text. Substitution is single-pass: a value that itself contains
// "<name>" stays literal, and no value may carry a control character that would make
// the device run a second command.
package variables

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
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
}

// Placeholder matches a variable placeholder; text in angle brackets that is not a
// valid name ("<cr>", "<1-4094>") is not one.
var Placeholder = regexp.MustCompile(`<([A-Za-z][A-Za-z0-9_]*)>`)

// Errors maps a variable name to its messages.
type Errors map[string][]string

func (e Errors) add(name, msg string) { e[name] = append(e[name], msg) }

// Render checks values against vars (choices holds the allowed values of inventory
// variables, by variable name) and returns the command with the values substituted.
// values come from a JSON body: strings, or numbers (converted to their decimal text).
func Render(command string, vars []Variable, values map[string]json.RawMessage, choices map[string][]string) (string, Errors) {
	errs := Errors{}
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
		if msg := check(v, val, choices[v.Name]); msg != "" {
			errs.add(v.Name, msg)
			continue
		}
		final[v.Name] = val
	}
	if len(errs) > 0 {
		return "", errs
	}
	out := Placeholder.ReplaceAllStringFunc(command, func(m string) string {
		name := m[1 : len(m)-1]
		if v, ok := final[name]; ok {
			return v
		}
		return m
	})
	return out, nil
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

func check(v Variable, val string, allowed []string) string {
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
