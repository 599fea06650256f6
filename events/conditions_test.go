package events

import (
	"encoding/json"
	"testing"
)

func TestConditions(t *testing.T) {
	var data map[string]any
	_ = json.Unmarshal([]byte(`{"success": false, "source": "schedule", "execution_duration": 12.5,
		"device": {"name": "par-r1"}, "site": {"slug": "paris"}, "command": {"name": "show version"},
		"tags": [{"slug": "core"}, {"slug": "edge"}]}`), &data)
	for _, tc := range []struct {
		cond string
		want bool
	}{
		{`{"attr": "success", "value": false}`, true},
		{`{"attr": "success", "value": true}`, false},
		{`{"attr": "success", "value": false, "negate": true}`, false},
		{`{"attr": "site.slug", "value": ["paris", "lyon"], "op": "in"}`, true},
		{`{"attr": "device.name", "value": "par-", "op": "regex"}`, true},
		{`{"attr": "device.name", "value": "r1", "op": "regex"}`, false},
		{`{"attr": "command.name", "value": "version", "op": "contains"}`, true},
		{`{"attr": "execution_duration", "value": 10, "op": "gt"}`, true},
		{`{"attr": "tags.slug", "value": "core", "op": "contains"}`, true},
		{`{"attr": "no.such.field", "value": 1}`, false},
		{`{"and": [{"attr": "success", "value": false}, {"attr": "source", "value": "schedule"}]}`, true},
		{`{"and": [{"attr": "success", "value": false}, {"attr": "source", "value": "api"}]}`, false},
		{`{"or": [{"attr": "source", "value": "api"}, {"and": [{"attr": "site.slug", "value": "paris"}]}]}`, true},
	} {
		c, err := ParseConditions(json.RawMessage(tc.cond))
		if err != nil {
			t.Fatalf("%s: %v", tc.cond, err)
		}
		if got := c.Match(data); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.cond, got, tc.want)
		}
	}
}

func TestConditionsRefused(t *testing.T) {
	for _, c := range []string{`[]`, `{"value": 1}`, `{"attr": "x"}`, `{"attr": "x", "value": true, "op": "gt"}`,
		`{"attr": "x", "value": "(", "op": "regex"}`, `{"attr": "x", "value": 1, "op": "like"}`, `{"and": {"attr": "x"}}`,
		`{"attr": "x", "value": 1, "whatever": 2}`} {
		if _, err := ParseConditions(json.RawMessage(c)); err == nil {
			t.Errorf("%s was accepted", c)
		}
	}
}
