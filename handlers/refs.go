package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"fieldkit/store"
)

// nested is the brief form of a related object: id, url, display and its key fields.
type nested map[string]any

// ref resolves a nested reference field (an id or a dict of unique fields) to an id.
// It returns (nil, sent) for an explicit null; errors are collected on the form.
func (a *API) ref(ctx context.Context, f *form, name, objectType string, required bool) (*int64, bool) {
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
func (a *API) refs(ctx context.Context, f *form, name, objectType string) ([]int64, bool) {
	raw, ok := f.Raw[name]
	if !ok {
		return nil, false
	}
	if string(raw) == "null" {
		return []int64{}, true
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		f.Errs.Add(name, `Expected a list of items but got type "`+jsonType(raw)+`".`)
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

func jsonType(raw json.RawMessage) string {
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

// itoa is used when building URLs.
func itoa(id int64) string { return strconv.FormatInt(id, 10) }
