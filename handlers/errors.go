package handlers

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"

	"fieldkit/handlers/httpjson"
	"fieldkit/store"
)

func errNotFound() *httpjson.Error { return httpjson.Detail(http.StatusNotFound, "Not found.") }

func errForbidden(msg string) *httpjson.Error {
	if msg == "" {
		msg = "You do not have permission to perform this action."
	}
	return httpjson.Detail(http.StatusForbidden, msg)
}

func errUnauthorized(msg string) *httpjson.Error {
	e := httpjson.Detail(http.StatusUnauthorized, msg)
	e.Header = http.Header{"WWW-Authenticate": {"Token"}}
	return e
}

func errMethod() *httpjson.Error {
	return httpjson.Detail(http.StatusMethodNotAllowed, "Method not allowed.")
}

// errorResponse maps any error to what the client sees. It is the one place that knows
// how store errors look over HTTP.
func (a *API) errorResponse(r *http.Request, err error) *httpjson.Error {
	var he *httpjson.Error
	if errors.As(err, &he) {
		return he
	}
	var fe *store.FieldError
	switch {
	case errors.As(err, &fe) && errors.Is(err, store.ErrConflict):
		return httpjson.BadRequest(fe.Field, fmt.Sprintf("An object with this %s already exists.", strings.ReplaceAll(fe.Field, "_", " ")))
	case errors.As(err, &fe):
		return httpjson.BadRequest(fe.Field, fe.Err.Error())
	case errors.Is(err, store.ErrNotFound):
		return errNotFound()
	case errors.Is(err, store.ErrForbidden):
		return errForbidden("")
	case errors.Is(err, store.ErrInUse):
		return httpjson.Detail(http.StatusConflict, "Unable to delete object: other objects depend on it.")
	case errors.Is(err, store.ErrLastSuperuser):
		return badRequestNF("This would leave no active superuser.")
	case errors.Is(err, store.ErrDeleteSelf):
		return badRequestNF("You cannot delete your own account.")
	}
	id := requestID(r)
	if httpjson.ClientGone(r) {
		a.Logger.LogAttrs(r.Context(), slog.LevelInfo, "request abandoned by the client",
			slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		return httpjson.Abandoned()
	}
	a.Logger.LogAttrs(r.Context(), slog.LevelError, "request failed",
		slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	return &httpjson.Error{Status: http.StatusInternalServerError, Body: map[string]string{"detail": "Internal server error", "request_id": id}}
}

// refused reports whether err is the client's to fix (a 400 and the like), not a
// failure: a bulk write records it against its element and goes on checking.
func refused(err error) bool {
	var he *httpjson.Error
	var fe *store.FieldError
	return errors.As(err, &he) || errors.As(err, &fe) || errors.Is(err, store.ErrLastSuperuser) ||
		errors.Is(err, store.ErrDeleteSelf)
}

func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := a.errorResponse(r, err)
	for k, vs := range e.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	httpjson.Write(w, e.Status, e.Body)
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
