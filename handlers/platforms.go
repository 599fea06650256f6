package handlers

import (
	"fieldkit/exec"
	"fieldkit/store"
)

// platformHooks: a platform's drivers are the exec package's, and so is the driver a
// platform actually gets.
var platformHooks = hooks{
	choices: map[string][]store.Choice{"driver": driverChoices(true), "effective_driver": driverChoices(false)},
	computed: map[string]func(store.Row) any{"effective_driver": func(r store.Row) any {
		return exec.DriverFor(r["driver"].(string), r["slug"].(string))
	}},
}

// driverChoices are exec's drivers; withInfer adds "", which infers the driver from the
// platform's slug.
func driverChoices(withInfer bool) []store.Choice {
	var out []store.Choice
	if withInfer {
		out = append(out, store.Choice{Value: "", Label: "(infer from slug)"})
	}
	for _, d := range exec.Drivers() {
		out = append(out, store.Choice{Value: d, Label: d})
	}
	return out
}
