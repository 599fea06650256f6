package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"fieldkit/store"
)

// maxBody is the largest request body accepted (a private key is a few KB).
const maxBody = 1 << 20

// handlerFunc is the one handler shape, as in the API: an error is mapped to a response
// once, by writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// httpError is an error with the status and body the client sees; cause is logged, never
// shown. Bodies keep the API's shape: {"detail": ...} or {"field": ["..."]}.
type httpError struct {
	status int
	body   any
	header http.Header
	cause  error
}

func (e *httpError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("http %d: %v", e.status, e.cause)
	}
	return fmt.Sprintf("http %d", e.status)
}

func (e *httpError) Unwrap() error { return e.cause }

func detail(status int, msg string) *httpError {
	return &httpError{status: status, body: map[string]string{"detail": msg}}
}

func errNotFound() *httpError { return detail(http.StatusNotFound, "Not found.") }

func errNoCredentials() *httpError {
	return detail(http.StatusUnauthorized, "Authentication credentials were not provided.")
}

func errCSRF() *httpError {
	return detail(http.StatusForbidden, "CSRF Failed: CSRF token missing or incorrect.")
}

// fieldErrors collects validation messages by field, in DRF's shape.
type fieldErrors map[string][]string

func (fe fieldErrors) add(field, msg string) { fe[field] = append(fe[field], msg) }

func (fe fieldErrors) has(field string) bool { return len(fe[field]) > 0 }

func (fe fieldErrors) err() error {
	if len(fe) == 0 {
		return nil
	}
	return &httpError{status: http.StatusBadRequest, body: map[string][]string(fe)}
}

func badRequest(field, msg string) *httpError {
	return &httpError{status: http.StatusBadRequest, body: map[string][]string{field: {msg}}}
}

// writeJSON is the one encoder.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if v == nil || status == http.StatusNoContent {
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a client gone mid-write is not our error
}

// writeError maps an error to what the client sees; internal errors are logged once
// with the request id the API put on the response.
func (u *UI) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	var fe *store.FieldError
	switch {
	case errors.As(err, &he):
	case errors.As(err, &fe) && errors.Is(err, store.ErrConflict) && fe.Field == "name":
		he = badRequest("name", "A credential set with this name already exists.")
	case errors.As(err, &fe):
		he = badRequest(fe.Field, fe.Err.Error())
	case errors.Is(err, store.ErrNotFound):
		he = errNotFound()
	default:
		id := w.Header().Get("X-Request-ID")
		u.log.LogAttrs(r.Context(), slog.LevelError, "request failed", slog.String("request_id", id),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		he = &httpError{status: http.StatusInternalServerError, body: map[string]string{"detail": "Internal server error", "request_id": id}}
	}
	for k, vs := range he.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	writeJSON(w, he.status, he.body)
}

// form is a decoded JSON object, read field by field so that a PATCH knows what was sent
// and every problem is collected before answering.
type form struct {
	raw  map[string]json.RawMessage
	errs fieldErrors
}

// decodeForm reads the body as one JSON object whose keys must all be in allowed.
func decodeForm(r *http.Request, allowed ...string) (*form, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, detail(http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body exceeds %d bytes.", maxBody))
	}
	if err != nil || !utf8.Valid(body) {
		return nil, badRequest("non_field_errors", "Could not read the request body as UTF-8.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	f := &form{errs: fieldErrors{}}
	if err := dec.Decode(&f.raw); err != nil || f.raw == nil || dec.More() {
		return nil, badRequest("non_field_errors", "Invalid data. Expected a dictionary (JSON object).")
	}
	keys := make([]string, 0, len(f.raw))
	for k := range f.raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !contains(allowed, k) {
			f.errs.add(k, "Unknown field.")
		}
	}
	return f, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// has reports whether the field was sent.
func (f *form) has(name string) bool { _, ok := f.raw[name]; return ok }

// str reads a string field; required means present and not blank. maxLen 0 = no limit.
func (f *form) str(name string, required bool, maxLen int) (string, bool) {
	raw, ok := f.raw[name]
	if !ok {
		if required {
			f.errs.add(name, "This field is required.")
		}
		return "", false
	}
	var s string
	if string(raw) == "null" {
		f.errs.add(name, "This field may not be null.")
		return "", false
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		f.errs.add(name, "Not a valid string.")
		return "", false
	}
	switch {
	case required && strings.TrimSpace(s) == "":
		f.errs.add(name, "This field may not be blank.")
	case maxLen > 0 && utf8.RuneCountInString(s) > maxLen:
		f.errs.add(name, fmt.Sprintf("Ensure this field has no more than %d characters.", maxLen))
	case strings.ContainsRune(s, 0):
		f.errs.add(name, "Null characters are not allowed.")
	default:
		return s, true
	}
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
		f.errs.add(name, "Must be a valid boolean.")
		return false, false
	}
	return b, true
}
