package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"unicode/utf8"

	"fieldkit/handlers/httpjson"
	"fieldkit/store"
)

// form is a decoded JSON object body, read field by field (see httpjson.Form).
type form = httpjson.Form

// decodeForm reads the body as one JSON object whose keys must all be in allowed.
func decodeForm(r *http.Request, allowed ...string) (*form, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	return formOf(body, allowed...)
}

// formOf reads a JSON value already read (see readBody) as a form.
func formOf(body json.RawMessage, allowed ...string) (*form, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return nil, badRequestNF("Invalid data. Expected a dictionary (JSON object).")
	}
	return httpjson.NewForm(raw, allowed...), nil
}

// readBody reads at most httpjson.MaxBody bytes of valid JSON, one value only.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, badRequestNF("Request body is empty.")
	}
	body, err := httpjson.ReadBody(r, badRequestNF("Could not read the request body."))
	if err != nil {
		return nil, err
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

func badRequestNF(msg string) *httpjson.Error {
	return &httpjson.Error{Status: http.StatusBadRequest, Body: map[string]any{"non_field_errors": []string{msg}}}
}

// refValue is a nested reference as sent: an integer id or a dict of unique fields.
func refValue(raw json.RawMessage) (id int64, attrs map[string]any, err error) {
	if n, err := httpjson.Int(raw); err == nil {
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
