package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"
)

// MaxBody is the largest request body accepted; larger ones get 413.
const MaxBody = 1 << 20

// ReadJSON reads the request body: at most MaxBody bytes of UTF-8, one JSON value.
// Every problem is a 400 (413 for a larger body) in the API's words.
func ReadJSON(r *http.Request) (json.RawMessage, error) {
	if r.Body == nil {
		return nil, Invalid("Request body is empty.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, Detail(http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body exceeds %d bytes.", MaxBody))
	case err != nil:
		return nil, Invalid("Could not read the request body.")
	case len(bytes.TrimSpace(body)) == 0:
		return nil, Invalid("Request body is empty.")
	case !utf8.Valid(body):
		return nil, Invalid("Request body is not valid UTF-8.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil, Invalid("JSON parse error: " + jsonErrText(err))
	}
	if dec.More() {
		return nil, Invalid("JSON parse error: more than one value in the body.")
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

// DecodeForm reads the body (see ReadJSON) as one JSON object whose keys must all be
// in allowed.
func DecodeForm(r *http.Request, allowed ...string) (*Form, error) {
	body, err := ReadJSON(r)
	if err != nil {
		return nil, err
	}
	return FormOf(body, allowed...)
}

// FormOf reads a JSON value already read (see ReadJSON) as a form.
func FormOf(body json.RawMessage, allowed ...string) (*Form, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return nil, Invalid("Invalid data. Expected a dictionary (JSON object).")
	}
	return NewForm(raw, allowed...), nil
}

// JSONType names a JSON value's type as DRF's messages do: dict, str, int, bool, null,
// list.
func JSONType(raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v)
	switch v.(type) {
	case map[string]any:
		return "dict"
	case string:
		return "str"
	case float64:
		return "int"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return "list"
}
