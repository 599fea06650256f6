package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"unicode/utf8"

	"fieldkit/handlers/httpjson"
	"fieldkit/store"
)

// handlerFunc is the one handler shape, as in the API: an error is mapped to a response
// once, by writeError. Errors the client sees are *httpjson.Error, with the API's body
// shapes: {"detail": ...} or {"field": ["..."]}.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func errNotFound() *httpjson.Error { return httpjson.Detail(http.StatusNotFound, "Not found.") }

func errNoCredentials() *httpjson.Error {
	return httpjson.Detail(http.StatusUnauthorized, "Authentication credentials were not provided.")
}

func errCSRF() *httpjson.Error {
	return httpjson.Detail(http.StatusForbidden, "CSRF Failed: CSRF token missing or incorrect.")
}

// writeJSON is httpjson.Write for answers that no cache may keep.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, status, v)
}

// writeError maps an error to what the client sees; internal errors are logged once
// with the request id the API put on the response.
func (u *UI) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpjson.Error
	var fe *store.FieldError
	switch {
	case errors.As(err, &he):
	case errors.As(err, &fe) && errors.Is(err, store.ErrConflict) && fe.Field == "name":
		he = httpjson.BadRequest("name", "A credential set with this name already exists.")
	case errors.As(err, &fe):
		he = httpjson.BadRequest(fe.Field, fe.Err.Error())
	case errors.Is(err, store.ErrNotFound):
		he = errNotFound()
	case httpjson.ClientGone(r):
		u.log.LogAttrs(r.Context(), slog.LevelInfo, "request abandoned by the client", slog.String("request_id", w.Header().Get("X-Request-ID")),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		he = httpjson.Abandoned()
	default:
		id := w.Header().Get("X-Request-ID")
		u.log.LogAttrs(r.Context(), slog.LevelError, "request failed", slog.String("request_id", id),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		he = &httpjson.Error{Status: http.StatusInternalServerError, Body: map[string]string{"detail": "Internal server error", "request_id": id}}
	}
	for k, vs := range he.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	writeJSON(w, he.Status, he.Body)
}

// form is a decoded JSON object, read field by field (see httpjson.Form).
type form = httpjson.Form

// decodeForm reads the body (at most httpjson.MaxBody bytes; a private key is a few KB)
// as one JSON object whose keys must all be in allowed.
func decodeForm(r *http.Request, allowed ...string) (*form, error) {
	unreadable := httpjson.BadRequest("non_field_errors", "Could not read the request body as UTF-8.")
	body, err := httpjson.ReadBody(r, unreadable)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(body) {
		return nil, unreadable
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil || raw == nil || dec.More() {
		return nil, httpjson.BadRequest("non_field_errors", "Invalid data. Expected a dictionary (JSON object).")
	}
	return httpjson.NewForm(raw, allowed...), nil
}
