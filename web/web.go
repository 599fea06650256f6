// Package web is the HTTP plumbing the API (package handlers) and the web interface
// (package ui) share: the one handler shape and its adapter, the router with its record
// of routes, request ids, the request's scheme and host, reading a JSON body, the one
// encoder, and the one mapping of errors to status codes and client-safe bodies. It
// names each route and its user for the access log and the metrics (package observe).
package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// HandlerFunc is the one handler shape: an error return is mapped to a response once,
// by Respond.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

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

// Detail is an error whose body is {"detail": msg}.
func Detail(status int, msg string) *Error {
	return &Error{Status: status, Body: map[string]string{"detail": msg}}
}

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

// BadRequest is a 400 with one message on one field.
func BadRequest(field, msg string) *Error {
	fe := FieldErrors{}
	fe.Add(field, msg)
	return &Error{Status: http.StatusBadRequest, Body: map[string]any(fe)}
}

// Invalid is a 400 about the request as a whole: {"non_field_errors": [msg]}.
func Invalid(msg string) *Error { return BadRequest("non_field_errors", msg) }

// Write is the one encoder: status, then v as JSON unless there is no body.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v == nil || status == http.StatusNoContent {
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a client gone mid-write is not our error
}

// Marshal encodes like Write, into bytes (for cached responses).
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}
