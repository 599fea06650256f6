package events

import (
	"encoding/json"
	"testing"
)

func TestTemplates(t *testing.T) {
	var ctx map[string]any
	_ = json.Unmarshal([]byte(`{"event": "created", "username": "admin", "data": {"id": 7, "success": false, "duration": 0.25,
		"device": {"name": "sw1", "site": null}, "error_message": "Timed out \"here\"", "tags": [{"slug": "core"}, {"slug": "edge"}]}}`), &ctx)
	for _, tc := range []struct{ src, want string }{
		{"plain text", "plain text"},
		{"{{ data.device.name }} failed", "sw1 failed"},
		{"{{data['device']['name']}}", "sw1"},
		{`{{ data["device"]["name"] | upper }}`, "SW1"},
		{"{{ data.tags[1].slug }}", "edge"},
		{"{{ data.success }} {{ data.id }} {{ data.duration }} {{ data.device.site }}", "False 7 0.25 None"},
		{`{"msg": {{ data.error_message | tojson }}}`, `{"msg": "Timed out \"here\""}`},
		{"{{ data.nothing }}|{{ data.nothing | default('n/a') }}|{{ nothing.at.all }}", "|n/a|"},
		{"{{ data.device }}", `{"name":"sw1","site":null}`},
		{"{{ username | lower }} {{ event }}", "admin created"},
	} {
		tpl, err := ParseTemplate(tc.src)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if got, _ := tpl.Render(ctx); got != tc.want {
			t.Errorf("%q renders %q, want %q", tc.src, got, tc.want)
		}
	}
}

// Nothing in a template can run code: blocks, calls, attributes of Python objects and
// filters other than the four are refused when the webhook is saved.
func TestTemplatesRefuseCode(t *testing.T) {
	for _, src := range []string{
		"{% for t in data.tags %}{{ t }}{% endfor %}",
		"{{ data.device.name.upper() }}",
		"{{ config.__class__.__init__.__globals__ }}x{{ lipsum() }}",
		"{{ data | attr('x') }}",
		"{{ 7 * 7 }}",
		"{{ data.id",
		"{{ data..id }}",
		"{{ }}",
	} {
		if _, err := ParseTemplate(src); err == nil {
			t.Errorf("%q was accepted", src)
		}
	}
}
