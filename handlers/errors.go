package handlers

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"

	"fieldkit/store"
)

// Error is an error with the status and body the client sees. Cause, if any, is logged
// and never shown.
type Error struct {
	Status int
	Body   any
	Header http.Header
	Cause  error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("http %d: %v", e.Status, e.Cause)
	}
	return fmt.Sprintf("http %d", e.Status)
}

func (e *Error) Unwrap() error { return e.Cause }

func detail(status int, msg string) *Error {
	return &Error{Status: status, Body: map[string]string{"detail": msg}}
}

func errNotFound() *Error { return detail(http.StatusNotFound, "Not found.") }

func errForbidden(msg string) *Error {
	if msg == "" {
		msg = "You do not have permission to perform this action."
	}
	return detail(http.StatusForbidden, msg)
}

func errUnauthorized(msg string) *Error {
	e := detail(http.StatusUnauthorized, msg)
	e.Header = http.Header{"WWW-Authenticate": {"Token"}}
	return e
}

func errMethod() *Error { return detail(http.StatusMethodNotAllowed, "Method not allowed.") }

// FieldErrors collects validation messages by field, in DRF's shape: a field maps to a
// list of messages, or to a nested FieldErrors / list of them for nested objects.
type FieldErrors map[string]any

// Add appends a message to a field.
func (fe FieldErrors) Add(field, msg string) {
	if list, ok := fe[field].([]string); ok {
		fe[field] = append(list, msg)
		return
	}
	fe[field] = []string{msg}
}

// Has reports whether field already has an error.
func (fe FieldErrors) Has(field string) bool { _, ok := fe[field]; return ok }

// Err is nil when there are no errors, otherwise a 400.
func (fe FieldErrors) Err() error {
	if len(fe) == 0 {
		return nil
	}
	return &Error{Status: http.StatusBadRequest, Body: map[string]any(fe)}
}

// badRequest is a 400 with one message on one field.
func badRequest(field, msg string) *Error {
	fe := FieldErrors{}
	fe.Add(field, msg)
	return &Error{Status: http.StatusBadRequest, Body: map[string]any(fe)}
}

// errorResponse maps any error to what the client sees. It is the one place that knows
// how store errors look over HTTP.
func (a *API) errorResponse(r *http.Request, err error) *Error {
	var he *Error
	if errors.As(err, &he) {
		return he
	}
	var fe *store.FieldError
	switch {
	case errors.As(err, &fe) && errors.Is(err, store.ErrConflict):
		return badRequest(fe.Field, fmt.Sprintf("An object with this %s already exists.", strings.ReplaceAll(fe.Field, "_", " ")))
	case errors.As(err, &fe):
		return badRequest(fe.Field, fe.Err.Error())
	case errors.Is(err, store.ErrNotFound):
		return errNotFound()
	case errors.Is(err, store.ErrForbidden):
		return errForbidden("")
	case errors.Is(err, store.ErrInUse):
		return detail(http.StatusConflict, "Unable to delete object: other objects depend on it.")
	}
	id := requestID(r)
	a.Logger.LogAttrs(r.Context(), slog.LevelError, "request failed",
		slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	return &Error{Status: http.StatusInternalServerError, Body: map[string]string{"detail": "Internal server error", "request_id": id}}
}

func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := a.errorResponse(r, err)
	for k, vs := range e.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	writeJSON(w, e.Status, e.Body)
}

// sortedKeys is used where error output must be stable.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
