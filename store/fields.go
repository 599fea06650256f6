package store

import (
	"math"
	"regexp"
	"strings"
)

// The fields several inventory models share.

// nameField is an object's unique name.
func nameField(maxLen int, doc string) Field {
	return Field{Name: "name", Column: "name", Kind: KindString, Required: true, MaxLen: maxLen, Nested: true,
		Filter: FilterLookups, Sort: true, Search: true, Doc: doc}
}

// slugField is an object's unique slug, the key nested references use.
var slugField = Field{Name: "slug", Column: "slug", Kind: KindString, Required: true, MaxLen: 100, Check: checkSlug,
	Nested: true, Filter: FilterLookups, Sort: true, Search: true, Doc: "letters, digits, - and _"}

// description is the free text most objects carry; ?brief=true shows it.
func description(maxLen int) Field {
	return Field{Name: "description", Column: "description", Kind: KindString, MaxLen: maxLen, Brief: true,
		Filter: FilterLookups, Search: true}
}

// tagsField is an object's tags, through its link table.
func tagsField(table, local string) Field {
	return Field{Name: "tags", Kind: KindInt, Rel: TypeTag, Join: &Join{table, local, "tag_id"}}
}

// customFields is NetBox's free-form object of custom fields: a PATCH merges keys, a
// PUT replaces them, null clears them.
func customFields(doc string, check func(any) (any, error)) Field {
	return Field{Name: "custom_fields", Column: "custom_fields", Kind: KindJSON, Default: map[string]any{},
		Check: check, Doc: doc}
}

var slugRE = regexp.MustCompile(`^[-a-zA-Z0-9_]+$`)

func checkSlug(v any) (any, error) {
	if !slugRE.MatchString(v.(string)) {
		return nil, Problem("Enter a valid slug consisting of letters, numbers, underscores or hyphens.")
	}
	return v, nil
}

var colorRE = regexp.MustCompile(`^[0-9a-fA-F]{6}$`)

func checkColor(v any) (any, error) {
	s := v.(string)
	if !colorRE.MatchString(s) {
		return nil, Problem("Enter a valid hexadecimal RGB color code (six digits, e.g. 9e9e9e).")
	}
	return strings.ToLower(s), nil
}

// checkSSHPort validates the custom field FieldKit itself reads: ssh_port, the port a
// device's SSH server listens on.
func checkSSHPort(v any) (any, error) {
	cf, _ := v.(map[string]any)
	p, ok := cf["ssh_port"]
	if !ok || p == nil {
		return v, nil
	}
	if n, isNum := p.(float64); !isNum || n != math.Trunc(n) || n < 1 || n > 65535 {
		return nil, Problem("ssh_port: Ensure this value is an integer between 1 and 65535.")
	}
	return v, nil
}

// choices makes the choices of values whose label is the value itself, capitalised.
func choices(values ...string) []Choice {
	out := make([]Choice, len(values))
	for i, v := range values {
		out[i] = Choice{v, strings.ToUpper(v[:1]) + v[1:]}
	}
	return out
}

// plainChoices makes the choices of values that are their own labels.
func plainChoices(values []string) []Choice {
	out := make([]Choice, len(values))
	for i, v := range values {
		out[i] = Choice{v, v}
	}
	return out
}

// ChoiceValues lists the choices' values.
func ChoiceValues(cs []Choice) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Value
	}
	return out
}

// MaxTargetTimeout is the longest connect or command timeout a platform or device may
// set, in seconds: no execution outlasts the longest one a request may ask for.
const MaxTargetTimeout = 300

// netboxFields are what a NetBox sync keeps on an object it brought: the object's id in
// that NetBox (shown, filterable: netbox_id__isnull=true lists the objects made here)
// and NetBox's last_updated of it (to skip what did not change).
func netboxFields() []Field {
	return []Field{
		{Name: "netbox_id", Column: "netbox_id", Kind: KindInt, Null: true, Access: ReadOnly, Filter: FilterLookups, Sort: true,
			Label: "NetBox id", Doc: "the object's id in the NetBox it is synced from, which makes it read-only here " +
				"(FieldKit's own settings excepted); null: made here"},
		{Name: "netbox_updated", Column: "netbox_updated", Kind: KindString, Access: Internal},
	}
}

// targetOverrides are the fields by which a platform, and a device over its platform,
// tune how the SSH driver reaches it; whose names them in the help texts.
func targetOverrides(whose string) []Field {
	return []Field{
		{Name: "connect_timeout", Column: "connect_timeout", Kind: KindInt, Null: true, Min: 1, Max: MaxTargetTimeout,
			Local: true, Label: "Connect timeout (s)",
			Doc: "seconds to connect, log in and prepare the CLI of " + whose + ", on their own; " +
				"null: counted in the execution's timeout"},
		{Name: "command_timeout", Column: "command_timeout", Kind: KindInt, Null: true, Min: 1, Max: MaxTargetTimeout,
			Local: true, Label: "Command timeout (s)",
			Doc: "seconds each command on " + whose + " may take (a slow commit), when the request sets no timeout; " +
				"null: the default"},
		{Name: "prompt_pattern", Column: "prompt_pattern", Kind: KindString, MaxLen: 200, Check: checkPromptPattern,
			Local: true, Label: "Prompt pattern",
			Doc: "a regular expression (Go syntax) every prompt of " + whose + " matches as a whole line, " +
				"replacing the driver's (a host name with unusual characters); empty: the driver's"},
	}
}

// checkPromptPattern accepts a regular expression Go can compile.
func checkPromptPattern(v any) (any, error) {
	s := v.(string)
	if _, err := regexp.Compile(s); err != nil {
		return nil, problemf("Enter a valid regular expression: %v.", err)
	}
	return s, nil
}

// accents folds the accented Latin letters of site and device names to plain ones.
var accents = strings.NewReplacer("à", "a", "á", "a", "â", "a", "ã", "a", "ä", "a", "å", "a", "æ", "ae", "ç", "c",
	"è", "e", "é", "e", "ê", "e", "ë", "e", "ì", "i", "í", "i", "î", "i", "ï", "i", "ñ", "n", "ò", "o", "ó", "o",
	"ô", "o", "õ", "o", "ö", "o", "ø", "o", "œ", "oe", "ù", "u", "ú", "u", "û", "u", "ü", "u", "ý", "y", "ÿ", "y", "ß", "ss")

// Slugify makes a slug of a name as the web UI does: lower case, accents dropped, every
// run of other characters a single "-".
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range accents.Replace(strings.ToLower(name)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
	}
	s := b.String()
	if len(s) > 100 {
		s = strings.TrimRight(s[:100], "-")
	}
	return s
}
