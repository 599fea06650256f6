package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"fieldkit/store"
)

// Helpers shared by the inventory resources (platforms, devices, interfaces, VLANs,
// IP addresses, tags).

// choiceLabels are the labels NetBox shows beside a choice value.
var choiceLabels = map[string]string{
	"active": "Active", "offline": "Offline", "planned": "Planned", "staged": "Staged", "failed": "Failed",
	"reserved": "Reserved", "deprecated": "Deprecated", "dhcp": "DHCP", "slaac": "SLAAC",
	"access": "Access", "tagged": "Tagged", "tagged-all": "Tagged (All)",
	"virtual": "Virtual", "bridge": "Bridge", "lag": "Link Aggregation Group (LAG)", "other": "Other",
	"100base-tx": "100BASE-TX (10/100ME)", "1000base-t": "1000BASE-T (1GE)", "10gbase-t": "10GBASE-T (10GE)",
	"1000base-x-sfp": "SFP (1GE)", "10gbase-x-sfpp": "SFP+ (10GE)", "25gbase-x-sfp28": "SFP28 (25GE)",
	"40gbase-x-qsfpp": "QSFP+ (40GE)", "100gbase-x-qsfp28": "QSFP28 (100GE)",
}

// choice renders a choice field as NetBox does on read: {"value", "label"}; an empty
// value is null.
func choice(value string) any {
	if value == "" {
		return nil
	}
	label, ok := choiceLabels[value]
	if !ok {
		label = value
	}
	return map[string]any{"value": value, "label": label}
}

// unwrapChoice lets a write send a choice back as it was read ({"value": "active", …})
// as well as the bare value NetBox documents.
func unwrapChoice(f *form, name string) {
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

// optRef reads a nullable nested reference into a store.OptRef.
func (a *API) optRef(ctx context.Context, f *form, name, objectType string) store.OptRef {
	id, sent := a.ref(ctx, f, name, objectType, false)
	return store.OptRef{Set: sent && !f.Errs.Has(name), ID: id}
}

// slugField reads a slug, checking its characters.
func slugField(f *form, create bool) *string {
	s, ok := f.Str("slug", create, 100)
	if !ok {
		return nil
	}
	if !validSlug(s) {
		f.Errs.Add("slug", "Enter a valid slug consisting of letters, numbers, underscores or hyphens.")
	}
	return &s
}

// strPtr reads an optional string field into a pointer (nil when absent or invalid).
func strPtr(f *form, name string, required bool, maxLen int) *string {
	if s, ok := f.Str(name, required, maxLen); ok {
		return &s
	}
	return nil
}

// choicePtr reads a choice field (bare value or read shape) into a pointer.
func choicePtr(f *form, name string, required bool, choices ...string) *string {
	unwrapChoice(f, name)
	if s, ok := f.Choice(name, required, choices...); ok {
		return &s
	}
	return nil
}

func boolPtr(f *form, name string) *bool {
	if b, ok := f.Boolean(name); ok {
		return &b
	}
	return nil
}

// renderTags is the nested list of an object's tags.
func renderTags(r *http.Request, tags []store.Tag) []any {
	out := make([]any, 0, len(tags))
	for _, t := range tags {
		out = append(out, briefTag(r, t.ID, t.Name, t.Slug, t.Color))
	}
	return out
}

// subName is an ordering expression on a related row's column.
func subName(table, col, fkCol string) string {
	return "(SELECT " + col + " FROM " + table + " WHERE id = t." + fkCol + ")"
}

// enumOf lists choices for the schema, dropping the empty one.
func enumOf(choices []string) []string {
	var out []string
	for _, c := range choices {
		if strings.TrimSpace(c) != "" {
			out = append(out, c)
		}
	}
	return out
}

// intArgs parses the values of an integer filter, for Custom filters.
func intArgs(vals []string) ([]any, error) {
	out := make([]any, 0, len(vals))
	for _, v := range vals {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a valid integer.", v)
		}
		out = append(out, n)
	}
	return out, nil
}

func placeholderList(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
