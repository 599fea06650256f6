package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"unicode/utf8"

	"fieldkit/store"
)

// maxBody is the largest request body accepted; larger ones get 413.
const maxBody = 1 << 20

// writeJSON is the one encoder.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v == nil || status == http.StatusNoContent {
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a client gone mid-write is not our error
}

// marshalJSON encodes like writeJSON, into bytes (for cached responses).
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// form is a decoded JSON object body, read field by field so that a PATCH knows which
// fields were sent, unknown fields and wrong types are reported by name, and every
// problem is collected before answering.
type form struct {
	raw  map[string]json.RawMessage
	errs FieldErrors
}

// decodeForm reads the body as one JSON object whose keys must all be in allowed.
func decodeForm(r *http.Request, allowed ...string) (*form, error) {
	raw, err := readBody(r)
	if err != nil {
		return nil, err
	}
	f := &form{errs: FieldErrors{}}
	if err := json.Unmarshal(raw, &f.raw); err != nil || f.raw == nil {
		return nil, &Error{Status: http.StatusBadRequest, Body: map[string]any{"non_field_errors": []string{"Invalid data. Expected a dictionary (JSON object)."}}}
	}
	ok := map[string]bool{}
	for _, k := range allowed {
		ok[k] = true
	}
	for _, k := range sortedKeys(f.raw) {
		if !ok[k] {
			f.errs.Add(k, "Unknown field.")
		}
	}
	return f, nil
}

// readBody reads at most maxBody bytes of valid JSON, one value only.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, badRequestNF("Request body is empty.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, detail(http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body exceeds %d bytes.", maxBody))
	}
	if err != nil {
		return nil, badRequestNF("Could not read the request body.")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequestNF("Request body is empty.")
	}
	if !utf8.Valid(body) {
		return nil, badRequestNF("Request body is not valid UTF-8.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil, badRequestNF("JSON parse error: " + jsonErrText(err))
	}
	if dec.More() {
		return nil, badRequestNF("JSON parse error: more than one value in the body.")
	}
	return v, nil
}

func jsonErrText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return "malformed JSON"
}

func badRequestNF(msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Body: map[string]any{"non_field_errors": []string{msg}}}
}

// has reports whether the field was sent.
func (f *form) has(name string) bool { _, ok := f.raw[name]; return ok }

// isNull reports whether the field was sent as null.
func (f *form) isNull(name string) bool { return string(f.raw[name]) == "null" }

// Err returns the collected validation errors (nil if none).
func (f *form) Err() error { return f.errs.Err() }

// str reads a string field. required applies only when create is true (a PATCH may omit
// anything). maxLen 0 means no limit. It returns the value and whether it was sent.
func (f *form) str(name string, required bool, maxLen int) (string, bool) {
	raw, ok := f.raw[name]
	if !ok {
		if required {
			f.errs.Add(name, "This field is required.")
		}
		return "", false
	}
	var s string
	if string(raw) == "null" {
		f.errs.Add(name, "This field may not be null.")
		return "", false
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		f.errs.Add(name, "Not a valid string.")
		return "", false
	}
	if required && strings.TrimSpace(s) == "" {
		f.errs.Add(name, "This field may not be blank.")
		return "", false
	}
	if maxLen > 0 && utf8.RuneCountInString(s) > maxLen {
		f.errs.Add(name, fmt.Sprintf("Ensure this field has no more than %d characters.", maxLen))
		return "", false
	}
	if strings.ContainsRune(s, 0) {
		f.errs.Add(name, "Null characters are not allowed.")
		return "", false
	}
	return s, true
}

// choice reads a string field that must be one of choices.
func (f *form) choice(name string, required bool, choices ...string) (string, bool) {
	s, ok := f.str(name, required, 0)
	if !ok {
		return "", false
	}
	for _, c := range choices {
		if s == c {
			return s, true
		}
	}
	f.errs.Add(name, fmt.Sprintf("%q is not a valid choice.", s))
	return "", false
}

// boolean reads a boolean field.
func (f *form) boolean(name string) (bool, bool) {
	raw, ok := f.raw[name]
	if !ok {
		return false, false
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		f.errs.Add(name, "Must be a valid boolean.")
		return false, false
	}
	return b, true
}

// integer reads an integer field within [lo, hi].
func (f *form) integer(name string, required bool, lo, hi int64) (int64, bool) {
	raw, ok := f.raw[name]
	if !ok {
		if required {
			f.errs.Add(name, "This field is required.")
		}
		return 0, false
	}
	n, err := jsonInt(raw)
	if err != nil {
		f.errs.Add(name, "A valid integer is required.")
		return 0, false
	}
	if n < lo || n > hi {
		f.errs.Add(name, fmt.Sprintf("Ensure this value is between %d and %d.", lo, hi))
		return 0, false
	}
	return n, true
}

// jsonInt accepts a JSON number with no fractional part.
func jsonInt(raw json.RawMessage) (int64, error) {
	var x float64
	if err := json.Unmarshal(raw, &x); err != nil {
		return 0, err
	}
	if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
		return 0, errors.New("not an integer")
	}
	return int64(x), nil
}

// object reads a JSON object field (custom_fields and the like).
func (f *form) object(name string) (map[string]any, bool) {
	raw, ok := f.raw[name]
	if !ok || string(raw) == "null" {
		return nil, ok
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		f.errs.Add(name, "Must be a JSON object.")
		return nil, false
	}
	return m, true
}

// refValue is a nested reference as sent: an integer id or a dict of unique fields.
func refValue(raw json.RawMessage) (id int64, attrs map[string]any, err error) {
	if n, err := jsonInt(raw); err == nil {
		return n, nil, nil
	}
	if err := json.Unmarshal(raw, &attrs); err != nil || attrs == nil {
		return 0, nil, errors.New("bad reference")
	}
	if v, ok := attrs["id"]; ok && len(attrs) == 1 {
		if n, ok := v.(float64); ok && n == math.Trunc(n) {
			return int64(n), nil, nil
		}
	}
	return 0, attrs, nil
}

// refMessage is DRF's wording for a reference that resolves to nothing.
func refMessage(id int64, attrs map[string]any) string {
	if attrs == nil {
		return fmt.Sprintf("Related object not found using the provided numeric ID: %d", id)
	}
	return "Related object not found using the provided attributes."
}

// boolParam reads a query-string boolean (true/false/1/0, any case).
func boolParam(v string) (bool, error) { return store.ParseBool(v) }
