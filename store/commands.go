package store

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Commands is netbox_toolkit_plugin.command: a command text with <placeholders>, for
// some platforms.
var Commands = declare(&Model{
	Type: TypeCommand, Name: "Command", Table: "commands", DefaultOrder: "name", Display: commandDisplay,
	Deleted: func(ctx context.Context, tx *sql.Tx, old Row) error {
		return logKeyGone(ctx, tx, "command_key", old.ID())
	},
	Fields: []Field{
		nameField(100, ""),
		{Name: "command", Column: "command", Kind: KindString, Required: true, Search: true,
			Doc: "command text; variables as <variable_name>"},
		{Name: "description", Column: "description", Kind: KindString, Search: true},
		{Name: "platforms", Kind: KindInt, Rel: TypePlatform, Join: &Join{"command_platforms", "command_id", "platform_id"},
			Required: true, Doc: "the platforms the command is written for"},
		{Name: "command_type", Column: "command_type", Kind: KindString, Choices: CommandTypes, Label: "Type",
			Default: CommandShow, Brief: true, Filter: FilterExact, Sort: true},
		{Name: "variables", Child: CommandVariables,
			Doc: "one per placeholder; a write replaces the list, matching existing variables by name"},
		tagsField("command_tags", "command_id"),
		customFields("", nil),
		{Name: "site", Column: "site_id", Kind: KindInt, Rel: TypeSite, Null: true, Access: ReadOnly, Sort: true,
			Doc: "at a hub, the FieldKit site this command was copied from, which runs it on its own devices; " +
				"null for the hub's own commands and at a site"},
	},
	Filters: map[string]Filter{
		"site_id":     {Path: "site", Lookups: true, Doc: "site id (at a hub: the FieldKit site the command was copied from)"},
		"site":        {Path: "site__slug", Lookups: true, Doc: "site slug (at a hub: the FieldKit site the command was copied from)"},
		"platform_id": {Path: "platforms", Doc: "platform id"},
		"platform":    {Path: "platforms__slug", Doc: "platform slug"},
		"tag":         {Path: "tags__slug", Doc: "tag slug"},
	},
})

// CommandVariables are a command's variables: one per placeholder, in the order written.
var CommandVariables = declare(&Model{
	Name: "CommandVariable", Table: "command_variables", Owner: "command_id", Key: "name", Position: "position",
	KeyTaken: "Variable names must be unique within a command.", NoStamps: true,
	Fields: []Field{
		{Name: "name", Column: "name", Kind: KindString, Required: true, MaxLen: 100, Check: checkVariableName,
			Doc: "the placeholder name: a letter, then letters, digits or _"},
		{Name: "display_name", Column: "display_name", Kind: KindString, MaxLen: 100, Doc: "defaults to name"},
		{Name: "variable_type", Column: "variable_type", Kind: KindString, Choices: variableTypes,
			Default: "text", Check: normalizeVariableType,
			Doc: "netbox_interface, netbox_vlan, netbox_vlan_name and netbox_ip are accepted and stored as inventory_*"},
		{Name: "required", Column: "required", Kind: KindBool, Default: true},
		{Name: "help_text", Column: "help_text", Kind: KindString},
		{Name: "default_value", Column: "default_value", Kind: KindString, Doc: "empty string when none"},
		{Name: "pattern", Column: "pattern", Kind: KindString, MaxLen: 500, Check: checkVariablePattern,
			Label: "Pattern",
			Doc: "a regular expression (Go syntax) the whole value must match, e.g. [0-9]{1,4}; empty: none, and then " +
				"characters that chain, pipe, redirect or substitute commands on the device's platform " +
				"(at least | ; & ` $ < > and backslash) are refused"},
	},
})

// VariablePattern compiles a variable's pattern so that it must match the whole value.
func VariablePattern(p string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + p + `)$`)
}

func checkVariablePattern(v any) (any, error) {
	if _, err := VariablePattern(v.(string)); err != nil {
		return nil, problemf("Enter a valid regular expression: %v.", err)
	}
	return v, nil
}

// commandDisplay is "name (p1, p2, p3 +N more)" when the platforms are loaded.
func commandDisplay(r Row) string {
	name, _ := r["name"].(string)
	platforms, _ := r["platforms"].([]Row)
	if len(platforms) == 0 {
		return name
	}
	var names []string
	for _, p := range platforms[:min(3, len(platforms))] {
		names = append(names, p["name"].(string))
	}
	s := name + " (" + strings.Join(names, ", ")
	if n := len(platforms) - 3; n > 0 {
		s += fmt.Sprintf(" +%d more", n)
	}
	return s + ")"
}

// Command is what execution needs of a command.
type Command struct {
	ID                         int64
	Name, Command, CommandType string
	PlatformIDs                []int64
	Variables                  []CommandVariable // in the order they were written
}

// CommandVariable is one placeholder of a command.
type CommandVariable struct {
	Name, DisplayName, VariableType string
	Required                        bool
	HelpText, DefaultValue          string
	Pattern                         string // "" when none
}

// LoadCommands loads commands for execution, by id, in the order given (missing ones
// left out). Every execution loads its command, so this reads the three tables directly
// rather than through the declaration's full rows.
func (db *DB) LoadCommands(ctx context.Context, ids []int64) ([]Command, error) {
	if len(ids) == 1 {
		// An execution's own command: kept by the check cache.
		cs, err := cached(ctx, db, fmt.Sprint("command\x00", ids[0]), func() ([]Command, error) { return db.loadCommands(ctx, ids) })
		return slices.Clip(cs), err
	}
	return db.loadCommands(ctx, ids)
}

func (db *DB) loadCommands(ctx context.Context, ids []int64) ([]Command, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, command, command_type FROM commands WHERE id IN (`+
		placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: commands: %w", err)
	}
	defer rows.Close()
	byID := map[int64]*Command{}
	for rows.Next() {
		var c Command
		if err := rows.Scan(&c.ID, &c.Name, &c.Command, &c.CommandType); err != nil {
			return nil, fmt.Errorf("store: commands: %w", err)
		}
		byID[c.ID] = &c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: commands: %w", err)
	}
	platforms, err := db.links(ctx, "command_platforms", "command_id", "platform_id", ids)
	if err != nil {
		return nil, err
	}
	vars, err := grouped(ctx, db, "command variables", []string{"command_id", "name", "display_name", "variable_type",
		"required", "help_text", "default_value", "pattern"}, `command_variables WHERE command_id IN (`+placeholders(len(ids))+`)`,
		"command_id, position, id", int64Args(ids), func(v *CommandVariable) []any {
			return []any{&v.Name, &v.DisplayName, &v.VariableType, &v.Required, &v.HelpText, &v.DefaultValue, &v.Pattern}
		})
	if err != nil {
		return nil, err
	}
	out := make([]Command, 0, len(byID))
	for _, id := range ids {
		if c, ok := byID[id]; ok {
			c.PlatformIDs, c.Variables = platforms[id], vars[id]
			out = append(out, *c)
		}
	}
	return out, nil
}

// Command loads one command for execution; a missing one is ErrNotFound.
func (db *DB) Command(ctx context.Context, id int64) (Command, error) {
	cs, err := db.LoadCommands(ctx, []int64{id})
	if err != nil {
		return Command{}, err
	}
	if len(cs) == 0 {
		return Command{}, fmt.Errorf("command %d: %w", id, ErrNotFound)
	}
	return cs[0], nil
}

// The command types.
const (
	CommandShow   = "show"
	CommandConfig = "config"
)

// CommandTypes are a command's types: show commands read, config commands change the
// device.
var CommandTypes = []Choice{{CommandShow, "Show (read-only)"}, {CommandConfig, "Config (changes the device)"}}

// variableTypes are the stored variable types: text typed in, or a value of the
// device's inventory.
var variableTypes = []Choice{{"text", "Text (typed in)"}, {"inventory_interface", "Interface of the device"},
	{"inventory_vlan", "VLAN id (device or site)"}, {"inventory_vlan_name", "VLAN name (device or site)"},
	{"inventory_ip", "IP address of the device"}}

// VariableTypes are the stored variable types' names.
var VariableTypes = ChoiceValues(variableTypes)

// variableAliases maps the NetBox plugin's spellings to the stored ones.
var variableAliases = map[string]string{
	"netbox_interface": "inventory_interface", "netbox_vlan": "inventory_vlan",
	"netbox_vlan_name": "inventory_vlan_name", "netbox_ip": "inventory_ip",
}

// NormalizeVariableType returns the stored spelling of a variable type, accepting the
// NetBox plugin's names; ok is false for an unknown type.
func NormalizeVariableType(t string) (string, bool) {
	if a, ok := variableAliases[t]; ok {
		return a, true
	}
	for _, v := range VariableTypes {
		if v == t {
			return t, true
		}
	}
	return "", false
}

var placeholderRE = regexp.MustCompile(`<([A-Za-z][A-Za-z0-9_]*)>`)

// VariableNameRE is what a variable name must match; text in angle brackets that does
// not match it (<cr>, <1-4094>) is literal command text, not a placeholder.
var VariableNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// literalTokens look like placeholders but are command text: "<cr>" is how Cisco help
// and pipelines spell the end of a line, so it stays literal and "cr" is not a variable
// name.
var literalTokens = map[string]bool{"cr": true}

// ValidVariableName reports whether name can be a variable (and so a placeholder).
func ValidVariableName(name string) bool {
	return VariableNameRE.MatchString(name) && !literalTokens[strings.ToLower(name)]
}

// Placeholders lists the distinct placeholder names of a command text, in order of
// first appearance.
func Placeholders(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		if !ValidVariableName(m[1]) {
			continue
		}
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

func checkVariableName(v any) (any, error) {
	s := v.(string)
	switch {
	case ValidVariableName(s):
		return s, nil
	case VariableNameRE.MatchString(s):
		return nil, problemf("%q is reserved: <%s> is literal command text.", s, s)
	}
	return nil, Problem("Enter a valid variable name: a letter, then letters, digits or underscores.")
}

func normalizeVariableType(v any) (any, error) {
	if t, ok := NormalizeVariableType(v.(string)); ok {
		return t, nil
	}
	return v, nil
}
