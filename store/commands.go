package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Command is a netbox_toolkit_plugin.command with its platforms, tags and variables.
type Command struct {
	ID                                      int64
	Name, Command, Description, CommandType string
	CustomFields                            map[string]any
	Platforms                               []CommandPlatform // ordered by name
	Tags                                    []CommandTag      // ordered by name
	Variables                               []CommandVariable // in the order they were written
	Created, LastUpdated                    time.Time
}

// CommandPlatform is a platform a command is written for.
type CommandPlatform struct {
	ID         int64
	Name, Slug string
}

// CommandTag is a tag on a command.
type CommandTag struct {
	ID                int64
	Name, Slug, Color string
}

// CommandVariable is one placeholder of a command. ID is ignored on write: variables are
// matched by name.
type CommandVariable struct {
	ID                              int64
	Name, DisplayName, VariableType string
	Required                        bool
	HelpText, DefaultValue          string
}

// PlatformIDs lists the ids of the command's platforms.
func (c Command) PlatformIDs() []int64 {
	ids := make([]int64, len(c.Platforms))
	for i, p := range c.Platforms {
		ids[i] = p.ID
	}
	return ids
}

// CommandInput creates or partially updates a command; nil fields are left as they are.
// Variables, when set, replace the command's variables: a variable keeps its id when a
// new one has its name.
type CommandInput struct {
	Name, Command, Description, CommandType *string
	Platforms, Tags                         *[]int64
	Variables                               *[]CommandVariable
	CustomFields                            *map[string]any
}

// The command types.
const (
	CommandShow   = "show"
	CommandConfig = "config"
)

// VariableTypes are the stored variable types.
var VariableTypes = []string{"text", "inventory_interface", "inventory_vlan", "inventory_vlan_name", "inventory_ip"}

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

// Command loads one command; a missing one is ErrNotFound.
func (db *DB) Command(ctx context.Context, id int64) (Command, error) {
	cs, err := db.Commands(ctx, []int64{id})
	if err != nil {
		return Command{}, err
	}
	if len(cs) == 0 {
		return Command{}, fmt.Errorf("command %d: %w", id, ErrNotFound)
	}
	return cs[0], nil
}

// Commands loads commands by id, with platforms, tags and variables.
func (db *DB) Commands(ctx context.Context, ids []int64) ([]Command, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, command, description, command_type, custom_fields,
		created, last_updated FROM commands WHERE id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: commands: %w", err)
	}
	defer rows.Close()
	var out []Command
	pos := map[int64]int{}
	for rows.Next() {
		var c Command
		var cf, cr, up string
		if err := rows.Scan(&c.ID, &c.Name, &c.Command, &c.Description, &c.CommandType, &cf, &cr, &up); err != nil {
			return nil, fmt.Errorf("store: commands: %w", err)
		}
		c.CustomFields = map[string]any{}
		_ = json.Unmarshal([]byte(cf), &c.CustomFields) // written by us as an object
		c.Created, c.LastUpdated = ParseStamp(cr), ParseStamp(up)
		pos[c.ID] = len(out)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: commands: %w", err)
	}
	rows.Close()
	if len(out) == 0 {
		return nil, nil
	}
	if err := db.commandPlatforms(ctx, ids, out, pos); err != nil {
		return nil, err
	}
	if err := db.commandTags(ctx, ids, out, pos); err != nil {
		return nil, err
	}
	return out, db.commandVariables(ctx, ids, out, pos)
}

func (db *DB) commandPlatforms(ctx context.Context, ids []int64, out []Command, pos map[int64]int) error {
	rows, err := db.r.QueryContext(ctx, `SELECT cp.command_id, p.id, p.name, p.slug FROM command_platforms cp
		JOIN platforms p ON p.id = cp.platform_id WHERE cp.command_id IN (`+placeholders(len(ids))+`)
		ORDER BY p.name, p.id`, int64Args(ids)...)
	if err != nil {
		return fmt.Errorf("store: command platforms: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var cid int64
		var p CommandPlatform
		if err := rows.Scan(&cid, &p.ID, &p.Name, &p.Slug); err != nil {
			return fmt.Errorf("store: command platforms: %w", err)
		}
		c := &out[pos[cid]]
		c.Platforms = append(c.Platforms, p)
	}
	return rows.Err()
}

func (db *DB) commandTags(ctx context.Context, ids []int64, out []Command, pos map[int64]int) error {
	rows, err := db.r.QueryContext(ctx, `SELECT ct.command_id, t.id, t.name, t.slug, t.color FROM command_tags ct
		JOIN tags t ON t.id = ct.tag_id WHERE ct.command_id IN (`+placeholders(len(ids))+`)
		ORDER BY t.name, t.id`, int64Args(ids)...)
	if err != nil {
		return fmt.Errorf("store: command tags: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var cid int64
		var t CommandTag
		if err := rows.Scan(&cid, &t.ID, &t.Name, &t.Slug, &t.Color); err != nil {
			return fmt.Errorf("store: command tags: %w", err)
		}
		c := &out[pos[cid]]
		c.Tags = append(c.Tags, t)
	}
	return rows.Err()
}

func (db *DB) commandVariables(ctx context.Context, ids []int64, out []Command, pos map[int64]int) error {
	rows, err := db.r.QueryContext(ctx, `SELECT command_id, id, name, display_name, variable_type, required,
		help_text, default_value FROM command_variables WHERE command_id IN (`+placeholders(len(ids))+`)
		ORDER BY command_id, position, id`, int64Args(ids)...)
	if err != nil {
		return fmt.Errorf("store: command variables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var cid int64
		var v CommandVariable
		if err := rows.Scan(&cid, &v.ID, &v.Name, &v.DisplayName, &v.VariableType, &v.Required,
			&v.HelpText, &v.DefaultValue); err != nil {
			return fmt.Errorf("store: command variables: %w", err)
		}
		c := &out[pos[cid]]
		c.Variables = append(c.Variables, v)
	}
	return rows.Err()
}

// CreateCommand inserts a command with its links and variables; it must fall within guard.
func (db *DB) CreateCommand(ctx context.Context, in CommandInput, guard Scope) (int64, error) {
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		typ := deref(in.CommandType)
		if typ == "" {
			typ = CommandShow
		}
		cf, err := customFieldsJSON(in.CustomFields)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO commands (name, command, description, command_type,
			custom_fields, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			deref(in.Name), deref(in.Command), deref(in.Description), typ, cf, now, now)
		if err != nil {
			return constraintErr(err, "command")
		}
		id, _ = res.LastInsertId()
		if err := writeCommandLinks(ctx, tx, id, in); err != nil {
			return err
		}
		return CheckScope(ctx, tx, TypeCommand, id, guard)
	})
	return id, err
}

// UpdateCommand changes the fields set in in; the result must stay within guard.
func (db *DB) UpdateCommand(ctx context.Context, id int64, in CommandInput, guard Scope) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		set := Set{}
		set.Str("name", in.Name)
		set.Str("command", in.Command)
		set.Str("description", in.Description)
		set.Str("command_type", in.CommandType)
		if in.CustomFields != nil {
			cf, err := customFieldsJSON(in.CustomFields)
			if err != nil {
				return err
			}
			set.Val("custom_fields", cf)
		}
		if err := set.Apply(ctx, tx, "commands", id, db.now()); err != nil {
			return constraintErr(err, "command")
		}
		if err := writeCommandLinks(ctx, tx, id, in); err != nil {
			return err
		}
		return CheckScope(ctx, tx, TypeCommand, id, guard)
	})
}

// DeleteCommand deletes a command; its logs keep the command's name.
func (db *DB) DeleteCommand(ctx context.Context, id int64) error {
	return db.deleteRow(ctx, "commands", id)
}

func customFieldsJSON(cf *map[string]any) (string, error) {
	if cf == nil || *cf == nil {
		return "{}", nil
	}
	b, err := json.Marshal(*cf)
	if err != nil {
		return "", &FieldError{Field: "custom_fields", Err: errors.New("not representable as JSON")}
	}
	return string(b), nil
}

func writeCommandLinks(ctx context.Context, tx *sql.Tx, id int64, in CommandInput) error {
	if in.Platforms != nil {
		if err := setLinks(ctx, tx, "command_platforms", "command_id", "platform_id", id, *in.Platforms); err != nil {
			return constraintErr(err, "command platforms")
		}
	}
	if in.Tags != nil {
		if err := setLinks(ctx, tx, "command_tags", "command_id", "tag_id", id, *in.Tags); err != nil {
			return constraintErr(err, "command tags")
		}
	}
	if in.Variables != nil {
		return replaceVariables(ctx, tx, id, *in.Variables)
	}
	return nil
}

// replaceVariables makes the command's variables exactly vars, updating in place the
// ones whose name already exists so that their ids stay stable.
func replaceVariables(ctx context.Context, tx *sql.Tx, id int64, vars []CommandVariable) error {
	del := `DELETE FROM command_variables WHERE command_id = ?`
	args := []any{id}
	if len(vars) > 0 {
		// "NOT IN (NULL)" would keep everything, so the clause exists only with names.
		del += ` AND name NOT IN (` + placeholders(len(vars)) + `)`
		for _, v := range vars {
			args = append(args, v.Name)
		}
	}
	if _, err := tx.ExecContext(ctx, del, args...); err != nil {
		return fmt.Errorf("store: command variables: %w", err)
	}
	for i, v := range vars {
		_, err := tx.ExecContext(ctx, `INSERT INTO command_variables (command_id, position, name, display_name,
			variable_type, required, help_text, default_value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (command_id, name) DO UPDATE SET position = excluded.position,
			display_name = excluded.display_name, variable_type = excluded.variable_type,
			required = excluded.required, help_text = excluded.help_text, default_value = excluded.default_value`,
			id, i, v.Name, v.DisplayName, v.VariableType, v.Required, v.HelpText, v.DefaultValue)
		if err != nil {
			return constraintErr(err, "command variable")
		}
	}
	return nil
}
