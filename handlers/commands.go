package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"fieldkit/handlers/httpjson"
	"fieldkit/store"
)

// commandResource is the toolkit's command template.
var commandResource = &Resource{
	Type: store.TypeCommand, Path: pathCommands, Name: "Command", Cache: true,
	Filters: map[string]Filter{
		"name":         {Path: "name", Lookups: true, Doc: "command name"},
		"command_type": {Path: "command_type", Doc: "show or config"},
		"platform_id":  {Path: "platforms", Doc: "platform id"},
		"platform":     {Path: "platforms__slug", Doc: "platform slug"},
		"tag":          {Path: "tags__slug", Doc: "tag slug"},
	},
	Ordering: map[string]string{"id": "t.id", "name": "t.name", "command_type": "t.command_type",
		"created": "t.created", "last_updated": "t.last_updated"},
	DefaultOrder: "name",
	Search:       []string{"t.name", "t.command", "t.description"},
	Fields: []FieldDoc{
		{Name: "id", Type: "integer", ReadOnly: true}, {Name: "url", Type: "string", ReadOnly: true},
		{Name: "display", Type: "string", ReadOnly: true, Doc: "name (platform, platform, platform +N more)"},
		{Name: "name", Type: "string", Required: true, MaxLength: 100},
		{Name: "command", Type: "string", Required: true, Doc: "command text; variables as <variable_name>"},
		{Name: "description", Type: "string"},
		{Name: "platforms", Type: "array", Items: "Platform", Required: true,
			Doc: "on write: platform ids or objects of unique fields ({\"slug\": ...}); on read: nested platforms"},
		{Name: "command_type", Type: "string", Enum: []string{store.CommandShow, store.CommandConfig}, Doc: "defaults to show"},
		{Name: "variables", Type: "array", Items: "CommandVariable",
			Doc: "nested and writable; a write replaces the list, matching existing variables by name"},
		{Name: "tags", Type: "array", Items: "Tag", Doc: "on write: tag ids or objects of unique fields"},
		{Name: "custom_fields", Type: "object"},
		{Name: "created", Type: "datetime", ReadOnly: true}, {Name: "last_updated", Type: "datetime", ReadOnly: true},
	},
}

// commandVariableFields documents the nested variable object for the schema.
var commandVariableFields = []FieldDoc{
	{Name: "id", Type: "integer", ReadOnly: true},
	{Name: "name", Type: "string", Required: true, MaxLength: 100, Doc: "the placeholder name: a letter, then letters, digits or _"},
	{Name: "display_name", Type: "string", MaxLength: 100, Doc: "defaults to name"},
	{Name: "variable_type", Type: "string", Enum: store.VariableTypes,
		Doc: "defaults to text; netbox_interface, netbox_vlan, netbox_vlan_name and netbox_ip are accepted and stored as inventory_*"},
	{Name: "required", Type: "boolean", Doc: "defaults to true"},
	{Name: "help_text", Type: "string"},
	{Name: "default_value", Type: "string", Doc: "empty string when none"},
}

var commandFields = []string{"name", "command", "description", "platforms", "command_type", "variables", "tags", "custom_fields"}

var variableFields = []string{"id", "name", "display_name", "variable_type", "required", "help_text", "default_value"}

func (a *API) commandCRUD() crudSet {
	wr := Writer{
		Fields: commandFields,
		Create: func(ctx context.Context, f *form, guard store.Scope) (int64, error) {
			in := a.commandInput(ctx, f, nil, false)
			if err := f.Err(); err != nil {
				return 0, err
			}
			return a.DB.CreateCommand(ctx, in, guard)
		},
		Update: func(ctx context.Context, id int64, f *form, partial bool, guard store.Scope) error {
			cur, err := a.DB.Command(ctx, id)
			if err != nil {
				return err
			}
			in := a.commandInput(ctx, f, &cur, partial)
			if err := f.Err(); err != nil {
				return err
			}
			return a.DB.UpdateCommand(ctx, id, in, guard)
		},
		Delete: a.DB.DeleteCommand,
	}
	return crudOf(a, commandResource, wr, a.DB.Commands, func(c store.Command) int64 { return c.ID }, a.renderCommand)
}

// commandInput reads and validates a command body. cur is the stored command on an
// update (nil on create); partial is a PATCH, where anything may be omitted.
func (a *API) commandInput(ctx context.Context, f *form, cur *store.Command, partial bool) store.CommandInput {
	var in store.CommandInput
	full := !partial
	if s, ok := nonBlank(f, "name", full, 100); ok {
		in.Name = &s
	}
	if s, ok := nonBlank(f, "command", full, 0); ok {
		in.Command = &s
	}
	if s, ok := f.Str("description", false, 0); ok {
		in.Description = &s
	}
	if s, ok := f.Choice("command_type", false, store.CommandShow, store.CommandConfig); ok {
		in.CommandType = &s
	}
	if ids, ok := a.refs(ctx, f, "platforms", store.TypePlatform); ok {
		if len(ids) == 0 {
			f.Errs.Add("platforms", "This list may not be empty.")
		}
		in.Platforms = &ids
	} else if full && !f.Has("platforms") {
		f.Errs.Add("platforms", "This field is required.")
	}
	if ids, ok := a.refs(ctx, f, "tags", store.TypeTag); ok {
		in.Tags = &ids
	}
	if m, ok := f.Object("custom_fields"); ok {
		in.CustomFields = &m
	}
	vars, varErrs, varsOK := parseVariables(f)
	if varsOK {
		in.Variables = &vars
	} else if full && !f.Has("variables") {
		// PUT replaces the whole object: no variables sent means none.
		vars, varsOK = []store.CommandVariable{}, true
		in.Variables = &vars
	}
	// Cross-check the command text and the variables with whatever this write leaves.
	text, textOK := "", false
	switch {
	case in.Command != nil:
		text, textOK = *in.Command, true
	case !f.Has("command") && cur != nil:
		text, textOK = cur.Command, true
	}
	if !f.Has("variables") && cur != nil && partial {
		vars, varsOK = cur.Variables, true
	}
	if textOK && varsOK {
		checkPlaceholders(f, text, vars, varErrs, f.Has("variables"))
	}
	if varErrs != nil && hasNestedErrors(varErrs) {
		list := make([]any, len(varErrs))
		for i, e := range varErrs {
			list[i] = e
		}
		f.Errs["variables"] = list
	}
	return in
}

// nonBlank reads a string that, when sent, may not be blank.
func nonBlank(f *form, name string, required bool, maxLen int) (string, bool) {
	s, ok := f.Str(name, required, maxLen)
	if ok && strings.TrimSpace(s) == "" {
		f.Errs.Add(name, "This field may not be blank.")
		return "", false
	}
	return s, ok
}

// parseVariables reads the nested variables. It returns one httpjson.FieldErrors per element
// (empty for a valid one) so that errors come out as DRF's nested list.
func parseVariables(f *form) ([]store.CommandVariable, []httpjson.FieldErrors, bool) {
	raw, ok := f.Raw["variables"]
	if !ok {
		return nil, nil, false
	}
	if string(raw) == "null" {
		f.Errs.Add("variables", "This field may not be null.")
		return nil, nil, false
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		f.Errs.Add("variables", `Expected a list of items but got type "`+jsonType(raw)+`".`)
		return nil, nil, false
	}
	vars := make([]store.CommandVariable, 0, len(items))
	errs := make([]httpjson.FieldErrors, len(items))
	seen := map[string]bool{}
	for i, it := range items {
		v, fe := parseVariable(it)
		if v.Name != "" {
			if seen[v.Name] {
				fe.Add("name", "Variable names must be unique within a command.")
			}
			seen[v.Name] = true
		}
		errs[i] = fe
		vars = append(vars, v)
	}
	return vars, errs, !hasNestedErrors(errs)
}

func parseVariable(raw json.RawMessage) (store.CommandVariable, httpjson.FieldErrors) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		fe := httpjson.FieldErrors{}
		fe.Add("non_field_errors", fmt.Sprintf("Invalid data. Expected a dictionary, but got %s.", jsonType(raw)))
		return store.CommandVariable{}, fe
	}
	sub := httpjson.NewForm(fields, variableFields...)
	v := store.CommandVariable{VariableType: "text", Required: true}
	if s, ok := sub.Str("name", true, 100); ok {
		switch {
		case store.ValidVariableName(s):
			v.Name = s
		case store.VariableNameRE.MatchString(s):
			sub.Errs.Add("name", fmt.Sprintf("%q is reserved: <%s> is literal command text.", s, s))
		default:
			sub.Errs.Add("name", "Enter a valid variable name: a letter, then letters, digits or underscores.")
		}
	}
	v.DisplayName, _ = sub.Str("display_name", false, 100)
	if v.DisplayName == "" {
		v.DisplayName = v.Name
	}
	if s, ok := sub.Str("variable_type", false, 0); ok {
		if t, ok := store.NormalizeVariableType(s); ok {
			v.VariableType = t
		} else {
			sub.Errs.Add("variable_type", fmt.Sprintf("%q is not a valid choice.", s))
		}
	}
	if b, ok := sub.Boolean("required"); ok {
		v.Required = b
	}
	v.HelpText, _ = sub.Str("help_text", false, 0)
	v.DefaultValue, _ = sub.Str("default_value", false, 0)
	return v, sub.Errs
}

func hasNestedErrors(errs []httpjson.FieldErrors) bool {
	for _, e := range errs {
		if len(e) > 0 {
			return true
		}
	}
	return false
}

// checkPlaceholders makes every placeholder of the command have a variable and every
// variable appear in the command. A variable's error goes on its own element when the
// variables were sent, else on the command.
func checkPlaceholders(f *form, text string, vars []store.CommandVariable, varErrs []httpjson.FieldErrors, varsSent bool) {
	declared := map[string]bool{}
	for _, v := range vars {
		declared[v.Name] = true
	}
	used := map[string]bool{}
	for _, p := range store.Placeholders(text) {
		used[p] = true
		if !declared[p] {
			f.Errs.Add("command", fmt.Sprintf("Placeholder <%s> has no variable; add a variable named %q.", p, p))
		}
	}
	for i, v := range vars {
		if v.Name == "" || used[v.Name] {
			continue
		}
		msg := fmt.Sprintf("Variable %q does not appear in the command as <%s>.", v.Name, v.Name)
		if varsSent && i < len(varErrs) {
			varErrs[i].Add("name", msg)
		} else {
			f.Errs.Add("command", msg)
		}
	}
}

// commandDisplay is "name (p1, p2, p3 +N more)".
func commandDisplay(c store.Command) string {
	if len(c.Platforms) == 0 {
		return c.Name
	}
	var names []string
	for i, p := range c.Platforms {
		if i == 3 {
			break
		}
		names = append(names, p.Name)
	}
	s := c.Name + " (" + strings.Join(names, ", ")
	if n := len(c.Platforms) - 3; n > 0 {
		s += fmt.Sprintf(" +%d more", n)
	}
	return s + ")"
}

func (a *API) renderCommand(r *http.Request, c store.Command, brief bool) any {
	n := briefCommand(r, c.ID, c.Name)
	n["display"] = commandDisplay(c)
	n["command_type"] = c.CommandType
	if brief {
		return n
	}
	platforms := make([]any, len(c.Platforms))
	for i, p := range c.Platforms {
		platforms[i] = briefPlatform(r, p.ID, p.Name, p.Slug)
	}
	tags := make([]any, len(c.Tags))
	for i, t := range c.Tags {
		tags[i] = briefTag(r, t.ID, t.Name, t.Slug, t.Color)
	}
	vars := make([]any, len(c.Variables))
	for i, v := range c.Variables {
		vars[i] = map[string]any{"id": v.ID, "name": v.Name, "display_name": v.DisplayName,
			"variable_type": v.VariableType, "required": v.Required, "help_text": v.HelpText,
			"default_value": v.DefaultValue}
	}
	n["command"] = c.Command
	n["description"] = c.Description
	n["platforms"] = platforms
	n["variables"] = vars
	n["tags"] = tags
	n["custom_fields"] = c.CustomFields
	n["created"] = stamp(c.Created)
	n["last_updated"] = stamp(c.LastUpdated)
	return n
}
