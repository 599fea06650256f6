package handlers

import (
	"encoding/json"
	"fieldkit/web"
)

// unwrapChoice lets a write send a choice back as it was read ({"value": "active", …})
// as well as the bare value NetBox documents.
func unwrapChoice(f *web.Form, name string) {
	raw, ok := f.Raw[name]
	if !ok || len(raw) == 0 || raw[0] != '{' {
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err == nil {
		if v, ok := obj["value"]; ok {
			f.Raw[name] = v
		}
	}
}
