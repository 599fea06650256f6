package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Form is a decoded JSON object body, read field by field so that a PATCH knows which
// fields were sent, unknown fields and wrong types are reported by name, and every
// problem is collected in Errs before answering.
type Form struct {
	Raw  map[string]json.RawMessage
	Errs FieldErrors
}

// NewForm is a Form over raw with an "Unknown field." error on every key not in allowed.
func NewForm(raw map[string]json.RawMessage, allowed ...string) *Form {
	f := &Form{Raw: raw, Errs: FieldErrors{}}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(allowed, k) {
			f.Errs.Add(k, "Unknown field.")
		}
	}
	return f
}

// Has reports whether the field was sent.
func (f *Form) Has(name string) bool { _, ok := f.Raw[name]; return ok }

// IsNull reports whether the field was sent as null.
func (f *Form) IsNull(name string) bool { return string(f.Raw[name]) == "null" }

// Err returns the collected validation errors (nil if none).
func (f *Form) Err() error { return f.Errs.Err() }

// Str reads a string field. required means present and not blank (a PATCH passes
// false: it may omit anything). maxLen 0 means no limit. It returns the value and
// whether it was sent and valid.
func (f *Form) Str(name string, required bool, maxLen int) (string, bool) {
	raw, ok := f.Raw[name]
	if !ok {
		if required {
			f.Errs.Add(name, "This field is required.")
		}
		return "", false
	}
	var s string
	if string(raw) == "null" {
		f.Errs.Add(name, "This field may not be null.")
		return "", false
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		f.Errs.Add(name, "Not a valid string.")
		return "", false
	}
	switch {
	case required && strings.TrimSpace(s) == "":
		f.Errs.Add(name, "This field may not be blank.")
	case maxLen > 0 && utf8.RuneCountInString(s) > maxLen:
		f.Errs.Add(name, fmt.Sprintf("Ensure this field has no more than %d characters.", maxLen))
	case strings.ContainsRune(s, 0):
		f.Errs.Add(name, "Null characters are not allowed.")
	default:
		return s, true
	}
	return "", false
}

// Choice reads a string field that must be one of choices.
func (f *Form) Choice(name string, required bool, choices ...string) (string, bool) {
	s, ok := f.Str(name, required, 0)
	if !ok {
		return "", false
	}
	if slices.Contains(choices, s) {
		return s, true
	}
	f.Errs.Add(name, fmt.Sprintf("%q is not a valid choice.", s))
	return "", false
}

// Boolean reads a boolean field.
func (f *Form) Boolean(name string) (bool, bool) {
	raw, ok := f.Raw[name]
	if !ok {
		return false, false
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		f.Errs.Add(name, "Must be a valid boolean.")
		return false, false
	}
	return b, true
}

// Integer reads an integer field within [lo, hi].
func (f *Form) Integer(name string, required bool, lo, hi int64) (int64, bool) {
	raw, ok := f.Raw[name]
	if !ok {
		if required {
			f.Errs.Add(name, "This field is required.")
		}
		return 0, false
	}
	n, err := Int(raw)
	if err != nil {
		f.Errs.Add(name, "A valid integer is required.")
		return 0, false
	}
	if n < lo || n > hi {
		f.Errs.Add(name, fmt.Sprintf("Ensure this value is between %d and %d.", lo, hi))
		return 0, false
	}
	return n, true
}

// Object reads a JSON object field (custom_fields and the like); null reads as (nil, true).
func (f *Form) Object(name string) (map[string]any, bool) {
	raw, ok := f.Raw[name]
	if !ok || string(raw) == "null" {
		return nil, ok
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		f.Errs.Add(name, "Must be a JSON object.")
		return nil, false
	}
	return m, true
}

// Int accepts a JSON number with no fractional part, or a string holding one ("12",
// " 12 ", "12.0"), as Django REST framework's IntegerField does: clients such as
// Ansible's uri module send every value of a body as a string.
func Int(raw json.RawMessage) (int64, error) {
	var x float64
	if err := json.Unmarshal(raw, &x); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil || !intString.MatchString(s) {
			return 0, err
		}
		if x, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return 0, err
		}
	}
	if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
		return 0, errors.New("not an integer")
	}
	return int64(x), nil
}

// intString is an integer written as a string: DRF strips a trailing ".0…" and spaces.
var intString = regexp.MustCompile(`^\s*[-+]?[0-9]{1,16}(\.0*)?\s*$`)
