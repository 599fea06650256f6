// Package httpjson is the JSON-over-HTTP plumbing the API (package handlers) and the
// web UI (package ui) share: the one encoder, the size limit on request bodies, the
// error that carries a status and a client-safe body, and a JSON object body read field
// by field with every problem collected in DRF's shape. It knows nothing of the store.
package httpjson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// MaxBody is the largest request body accepted; larger ones get 413.
const MaxBody = 1 << 20

// StatusClientClosed is the status recorded for a request whose client went away before
// the answer (nginx's 499). Nobody reads that answer, and nothing failed on the server.
const StatusClientClosed = 499

// ClientGone reports whether the request's client went away: the server cancels a
// request's context when its connection closes, and whatever the request was waiting
// on then fails with that cancellation. Such a failure is logged at info, never as an
// error, so that a closed browser tab pages nobody.
func ClientGone(r *http.Request) bool { return errors.Is(r.Context().Err(), context.Canceled) }

// Abandoned is the answer to a request whose client went away.
func Abandoned() *Error { return Detail(StatusClientClosed, "Client closed the request.") }

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

// ReadBody reads the request body, at most MaxBody bytes: a larger body is a 413, and
// one that cannot be read is the caller's unreadable error.
func ReadBody(r *http.Request, unreadable *Error) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, Detail(http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body exceeds %d bytes.", MaxBody))
	}
	if err != nil {
		return nil, unreadable
	}
	return body, nil
}
