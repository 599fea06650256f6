package handlers

import (
	"context"
	"fmt"

	"fieldkit/store"
	"fieldkit/web"
)

// commandHooks check a command's text and variables together: every placeholder has a
// variable and every variable a placeholder, a default value matches its variable's
// pattern; and a variable's display name defaults to its name.
var commandHooks = hooks{check: checkCommand}

// checkCommand cross-checks the command text and the variables this write leaves: what
// it sends, else (on a PATCH) what is stored.
func checkCommand(_ context.Context, _ *API, f *web.Form, v store.Values, cur store.Row, full bool) error {
	vars, varsSent := v["variables"].([]store.Values)
	varErrs := make([]web.FieldErrors, len(vars))
	for i, x := range vars {
		varErrs[i] = web.FieldErrors{}
		if dn, _ := x["display_name"].(string); dn == "" {
			x["display_name"] = x["name"]
		}
		pattern, _ := x["pattern"].(string)
		if def, _ := x["default_value"].(string); pattern != "" && def != "" {
			if re, err := store.VariablePattern(pattern); err == nil && !re.MatchString(def) {
				varErrs[i].Add("default_value", "The default value does not match the pattern.")
			}
		}
	}
	text, textOK := v["command"].(string)
	if !f.Has("command") && cur != nil {
		text, textOK = cur["command"].(string), true
	}
	varsOK := varsSent
	if !f.Has("variables") && cur != nil && !full {
		for _, row := range cur["variables"].([]store.Row) {
			vars = append(vars, store.Values{"name": row["name"]})
		}
		varsOK = true
	}
	if textOK && varsOK {
		checkPlaceholders(f, text, vars, varErrs, f.Has("variables"))
	}
	for _, e := range varErrs {
		if len(e) > 0 {
			list := make([]any, len(varErrs))
			for i, e := range varErrs {
				list[i] = e
			}
			f.Errs["variables"] = list
			return nil
		}
	}
	return nil
}

// checkPlaceholders makes every placeholder of the command have a variable and every
// variable appear in the command. A variable's error goes on its own element when the
// variables were sent, else on the command.
func checkPlaceholders(f *web.Form, text string, vars []store.Values, varErrs []web.FieldErrors, varsSent bool) {
	declared := map[string]bool{}
	for _, v := range vars {
		declared[v["name"].(string)] = true
	}
	used := map[string]bool{}
	for _, p := range store.Placeholders(text) {
		used[p] = true
		if !declared[p] {
			f.Errs.Add("command", fmt.Sprintf("Placeholder <%s> has no variable; add a variable named %q.", p, p))
		}
	}
	for i, v := range vars {
		name := v["name"].(string)
		if used[name] {
			continue
		}
		msg := fmt.Sprintf("Variable %q does not appear in the command as <%s>.", name, name)
		if varsSent && i < len(varErrs) {
			varErrs[i].Add("name", msg)
		} else {
			f.Errs.Add("command", msg)
		}
	}
}
