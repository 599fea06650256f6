package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"fieldkit/store"
)

// NotFound is the 404 of an unknown path or an object the client may not see.
func NotFound() *Error { return Detail(http.StatusNotFound, "Not found.") }

// Forbidden is a 403; "" says the client lacks the permission.
func Forbidden(msg string) *Error {
	if msg == "" {
		msg = "You do not have permission to perform this action."
	}
	return Detail(http.StatusForbidden, msg)
}

// Unauthorized is a 401 asking for a token.
func Unauthorized(msg string) *Error {
	e := Detail(http.StatusUnauthorized, msg)
	e.Header = http.Header{"WWW-Authenticate": {"Token"}}
	return e
}

// NoCredentials is the 401 of a request with neither a token nor a login session.
func NoCredentials() *Error { return Unauthorized("Authentication credentials were not provided.") }

// Inactive is the 401 of a token or session whose user is inactive or gone.
func Inactive() *Error { return Unauthorized("User inactive or deleted.") }

// CSRFFailed is the 403 of an unsafe request by session without its CSRF token.
func CSRFFailed() *Error { return Forbidden("CSRF Failed: CSRF token missing or incorrect.") }

// PathID reads the :id path parameter; anything but a positive integer in its plain
// decimal form ("+1", "01" are not 1) is a 404.
func PathID(r *http.Request) (int64, error) {
	id, ok := ParseID(Param(r, "id"))
	if !ok {
		return 0, NotFound()
	}
	return id, nil
}

// MethodNotAllowed is the 405 of a method a path does not answer.
func MethodNotAllowed() *Error { return Detail(http.StatusMethodNotAllowed, "Method not allowed.") }

// ClientError maps an error to what the client sees, when it is the client's to fix or
// know: an *Error as it is, and the store's errors. It is the one place that knows how
// store errors look over HTTP. ok is false for an internal failure.
func ClientError(err error) (e *Error, ok bool) {
	var fe *store.FieldError
	switch {
	case errors.As(err, &e):
		return e, true
	case errors.As(err, &fe) && errors.Is(err, store.ErrConflict):
		return BadRequest(fe.Field, fmt.Sprintf("An object with this %s already exists.", strings.ReplaceAll(fe.Field, "_", " "))), true
	case errors.As(err, &fe):
		return BadRequest(fe.Field, fe.Err.Error()), true
	case errors.Is(err, store.ErrNotFound):
		return NotFound(), true
	case errors.Is(err, store.ErrForbidden):
		return Forbidden(""), true
	case errors.Is(err, store.ErrInUse):
		return Detail(http.StatusConflict, "Unable to delete object: other objects depend on it."), true
	case errors.Is(err, store.ErrLastSuperuser):
		return Invalid("This would leave no active superuser."), true
	case errors.Is(err, store.ErrDeleteSelf):
		return Invalid("You cannot delete your own account."), true
	}
	return nil, false
}

// Answer is the response of err: ClientError's; for a request whose client went away,
// a 499 logged at info; for an internal failure a 500 carrying the request id, the
// failure logged once with that id.
func Answer(r *http.Request, log *slog.Logger, err error) *Error {
	if e, ok := ClientError(err); ok {
		return e
	}
	id := RequestID(r)
	if ClientGone(r) {
		log.LogAttrs(r.Context(), slog.LevelInfo, "request abandoned by the client", slog.String("request_id", id),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		return Detail(StatusClientClosed, "Client closed the request.")
	}
	log.LogAttrs(r.Context(), slog.LevelError, "request failed", slog.String("request_id", id),
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	return internal(id)
}

// Respond writes the response of err (see Answer).
func Respond(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e := Answer(r, log, err)
	for k, vs := range e.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	Write(w, e.Status, e.Body)
}

func internal(requestID string) *Error {
	return &Error{Status: http.StatusInternalServerError,
		Body: map[string]string{"detail": "Internal server error", "request_id": requestID}}
}

// StatusClientClosed is the status recorded for a request whose client went away before
// the answer (nginx's 499). Nobody reads that answer, and nothing failed on the server.
const StatusClientClosed = 499

// ClientGone reports whether the request's client went away: the server cancels a
// request's context when its connection closes, and whatever the request was waiting
// on then fails with that cancellation. Such a failure is logged at info, never as an
// error, so that a closed browser tab pages nobody.
func ClientGone(r *http.Request) bool { return errors.Is(r.Context().Err(), context.Canceled) }
