package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"fieldkit/store"
	"fieldkit/web"
)

// nested is the brief form of a related object: id, url, display and its key fields.
type nested map[string]any

// ref resolves a nested reference field (an id or a dict of unique fields) to an id.
// It returns (nil, sent) for an explicit null; errors are collected on the form.
func (a *API) ref(ctx context.Context, f *web.Form, name, objectType string, required bool) (*int64, bool) {
	raw, ok := f.Raw[name]
	if !ok {
		if required {
			f.Errs.Add(name, "This field is required.")
		}
		return nil, false
	}
	if string(raw) == "null" {
		if required {
			f.Errs.Add(name, "This field may not be null.")
		}
		return nil, true
	}
	id, err := a.resolve(ctx, raw, objectType)
	if err != nil {
		f.Errs.Add(name, err.Error())
		return nil, false
	}
	return &id, true
}

// refs resolves a list of nested references.
func (a *API) refs(ctx context.Context, f *web.Form, name, objectType string) ([]int64, bool) {
	raw, ok := f.Raw[name]
	if !ok {
		return nil, false
	}
	if string(raw) == "null" {
		return []int64{}, true
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		f.Errs.Add(name, `Expected a list of items but got type "`+web.JSONType(raw)+`".`)
		return nil, false
	}
	ids := make([]int64, 0, len(items))
	seen := map[int64]bool{}
	for _, it := range items {
		id, err := a.resolve(ctx, it, objectType)
		if err != nil {
			f.Errs.Add(name, err.Error())
			return nil, false
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, true
}

// refError is a client-facing reference failure.
type refError string

func (e refError) Error() string { return string(e) }

func (a *API) resolve(ctx context.Context, raw json.RawMessage, objectType string) (int64, error) {
	id, attrs, err := refValue(raw)
	if err != nil {
		return 0, refError("Invalid reference: expected an integer id or an object of unique fields.")
	}
	if attrs == nil {
		ok, err := a.DB.Exists(ctx, objectType, id)
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, refError(refMessage(id, nil))
		}
		return id, nil
	}
	id, err = a.DB.ResolveRef(ctx, objectType, attrs)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrUnknownField) || errors.Is(err, store.ErrBadValue) {
		return 0, refError(refMessage(0, attrs))
	}
	return id, err
}

// refValue is a nested reference as sent: an integer id or a dict of unique fields.
func refValue(raw json.RawMessage) (id int64, attrs map[string]any, err error) {
	if n, err := web.Int(raw); err == nil {
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

// itoa is used when building URLs.
func itoa(id int64) string { return strconv.FormatInt(id, 10) }
