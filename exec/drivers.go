package exec

import (
	"regexp"
	"sort"
	"strings"
)

// driver describes one platform as data. Prompt patterns are matched against
// the last line of the buffer only, after ANSI escapes are stripped.
type driver struct {
	name string
	exec bool // one exec channel per command instead of a PTY shell

	prompt       *regexp.Regexp // any prompt of the CLI
	privPrompt   *regexp.Regexp // privileged exec prompt; nil: no enable step
	configPrompt *regexp.Regexp
	// promptPreamble matches lines the CLI prints just above its prompt
	// (Junos "[edit]"), removed with the prompt.
	promptPreamble *regexp.Regexp

	enable         string
	passwordPrompt *regexp.Regexp
	setup          []string // paging off; the width comes with the PTY request (ptyCols), which these CLIs honour over SSH, so a width command would only cost a device round trip
	pagers         []*regexp.Regexp
	// questions are answered on the way to a prompt: leaving config mode
	// with a pending change (a user's own "end" or "exit") stays put, so
	// that the commit that follows still decides.
	questions []question

	configEnter  string
	configCommit []string // sent after the lines; output checked for errors
	configExit   []string // back to exec mode after a successful change
	configAbort  []string // back to exec mode discarding the change
	logout       string

	errors []errorPattern
}

// question is a device prompt for an answer other than a command.
type question struct {
	re     *regexp.Regexp
	answer string
}

// errorPattern maps one vendor error line to a SyntaxError type.
type errorPattern struct {
	re  *regexp.Regexp
	typ string
}

// Prompt building blocks: a host name of the usual characters, optional
// "(config...)" mode, then the privilege character.
const (
	hostChars = `[\w.\-@/:~]{1,63}`
	modePart  = `(\([\w.\-@/:+ ]{0,40}\))?`
)

var (
	ciscoPrompt  = regexp.MustCompile(`^` + hostChars + modePart + `[>#]\s?$`)
	ciscoPriv    = regexp.MustCompile(`^` + hostChars + `#\s?$`)
	ciscoConfig  = regexp.MustCompile(`^` + hostChars + `\(conf[^)]*\)#\s?$`)
	passwordLine = regexp.MustCompile(`(?i)password:\s?$`)
	ciscoMore    = regexp.MustCompile(`^\s*-+\s?More\s?-+\s*$`)
	junosMore    = regexp.MustCompile(`^\s*---\(more( \d+%)?\)---\s*$`)

	junosPrompt   = regexp.MustCompile(`^` + hostChars + `[>#%]\s?$`)
	junosConfig   = regexp.MustCompile(`^` + hostChars + `#\s?$`)
	junosPreamble = regexp.MustCompile(`^(\[edit[^\]]*\]|\{[\w:]+\})$`)

	genericPrompt = regexp.MustCompile(`[>#$%]\s*$`)
)

// ciscoErrors are the classic IOS error strings, shared by IOS and IOS-XR.
var ciscoErrors = []errorPattern{
	{regexp.MustCompile(`^% ?Invalid input detected`), InvalidInput},
	// FRR's vtysh, an IOS-style CLI, says "% Command incomplete: show".
	{regexp.MustCompile(`^% ?(Incomplete command|Command incomplete)`), IncompleteCommand},
	{regexp.MustCompile(`^% ?Ambiguous command`), AmbiguousCommand},
	{regexp.MustCompile(`^% ?(Unknown command|Unrecognized command)`), UnknownCommand},
	{regexp.MustCompile(`^(% ?)?(Command authorization failed|Authorization failed|This command is not authorized|Permission denied|Access denied)`), PermissionDenied},
}

var drivers = map[string]*driver{
	"cisco_ios": {
		name: "cisco_ios", prompt: ciscoPrompt, privPrompt: ciscoPriv, configPrompt: ciscoConfig,
		enable: "enable", passwordPrompt: passwordLine,
		setup:       []string{"terminal length 0"},
		pagers:      []*regexp.Regexp{ciscoMore},
		configEnter: "configure terminal", configExit: []string{"end"}, configAbort: []string{"end"},
		logout: "exit", errors: ciscoErrors,
	},
	"cisco_nxos": {
		name: "cisco_nxos", prompt: ciscoPrompt, privPrompt: ciscoPriv, configPrompt: ciscoConfig,
		enable: "enable", passwordPrompt: passwordLine,
		setup:       []string{"terminal length 0"},
		pagers:      []*regexp.Regexp{ciscoMore},
		configEnter: "configure terminal", configExit: []string{"end"}, configAbort: []string{"end"},
		logout: "exit",
		errors: []errorPattern{
			{regexp.MustCompile(`^% ?Invalid (command|input|parameter|number|value|range|ip address)`), InvalidInput},
			{regexp.MustCompile(`^% ?Incomplete command`), IncompleteCommand},
			{regexp.MustCompile(`^% ?Ambiguous command`), AmbiguousCommand},
			{regexp.MustCompile(`^% ?(Permission denied|Access denied|Authorization failed)`), PermissionDenied},
			{regexp.MustCompile(`^(% ?)?ERROR:`), ConfigRejected},
		},
	},
	"cisco_iosxr": {
		name: "cisco_iosxr", prompt: ciscoPrompt, configPrompt: ciscoConfig,
		setup:       []string{"terminal length 0"},
		pagers:      []*regexp.Regexp{ciscoMore},
		questions:   []question{{regexp.MustCompile(`^Uncommitted changes found, commit them.*\[cancel\]:\s*$`), "cancel"}},
		configEnter: "configure terminal", configCommit: []string{"commit"},
		configExit: []string{"end"}, configAbort: []string{"abort"},
		logout: "exit",
		errors: append([]errorPattern{
			{regexp.MustCompile(`^% ?(Failed to commit|Verification of the configuration failed)`), ConfigRejected},
			{regexp.MustCompile(`^!!% `), ConfigRejected},
		}, ciscoErrors...),
	},
	"arista_eos": {
		name: "arista_eos", prompt: ciscoPrompt, privPrompt: ciscoPriv, configPrompt: ciscoConfig,
		enable: "enable", passwordPrompt: passwordLine,
		setup:       []string{"terminal length 0"},
		pagers:      []*regexp.Regexp{ciscoMore},
		configEnter: "configure terminal", configExit: []string{"end"}, configAbort: []string{"end"},
		logout: "exit",
		errors: []errorPattern{
			{regexp.MustCompile(`^% ?Invalid input`), InvalidInput},
			{regexp.MustCompile(`^% ?Incomplete command`), IncompleteCommand},
			{regexp.MustCompile(`^% ?Ambiguous command`), AmbiguousCommand},
			{regexp.MustCompile(`^% ?Unrecognized command`), UnknownCommand},
			{regexp.MustCompile(`^% ?(Authorization denied|Permission denied|Insufficient privilege)`), PermissionDenied},
			{regexp.MustCompile(`^% ?Error`), ConfigRejected},
		},
	},
	"juniper_junos": {
		name: "juniper_junos", prompt: junosPrompt, configPrompt: junosConfig, promptPreamble: junosPreamble,
		setup:       []string{"set cli screen-length 0"},
		pagers:      []*regexp.Regexp{junosMore},
		questions:   []question{{regexp.MustCompile(`^Exit with uncommitted changes\? \[yes,no\] \(yes\)\s*$`), "no"}},
		configEnter: "configure", configCommit: []string{"commit and-quit"},
		configAbort: []string{"rollback 0", "exit configuration-mode"},
		logout:      "exit",
		errors: []errorPattern{
			{regexp.MustCompile(`^(error: )?syntax error`), InvalidInput},
			{regexp.MustCompile(`^(error: )?unknown command`), UnknownCommand},
			{regexp.MustCompile(`^(error: )?'.*' is ambiguous`), AmbiguousCommand},
			{regexp.MustCompile(`^(error: )?missing argument`), IncompleteCommand},
			{regexp.MustCompile(`^(error: )?(permission denied|.*access denied)`), PermissionDenied},
			{regexp.MustCompile(`^error: `), ConfigRejected},
		},
	},
	"linux": {name: "linux", exec: true},
	"generic": {
		name: "generic", prompt: genericPrompt,
		pagers:      []*regexp.Regexp{ciscoMore, junosMore},
		configEnter: "configure terminal", configExit: []string{"end"}, configAbort: []string{"end"},
		logout: "exit",
		errors: append([]errorPattern{
			{regexp.MustCompile(`^(% ?)?Invalid (input|command)`), InvalidInput},
			{regexp.MustCompile(`^(error: )?syntax error`), InvalidInput},
			{regexp.MustCompile(`(^unknown command|: command not found$)`), UnknownCommand},
		}, ciscoErrors...),
	},
}

// guidance is the one sentence shown with each SyntaxError type.
var guidance = map[string]string{
	InvalidInput:      "Check the spelling and arguments of the command against this platform's CLI; the device rejected the input where it printed its marker.",
	IncompleteCommand: "The command is missing a required keyword or argument; complete it (type '?' on the device to list what it expects).",
	AmbiguousCommand:  "An abbreviated keyword matches several commands; spell the keyword out in full.",
	UnknownCommand:    "The device does not know this command; check that it exists on this platform and software version.",
	PermissionDenied:  "The account is not authorised for this command; use credentials with a higher privilege level or an enable password.",
	ConfigRejected:    "The device refused the configuration change; fix the rejected line and run the command again, the lines after it were not sent.",
}

// Drivers returns the names of the built-in drivers, sorted.
func Drivers() []string {
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// slugDrivers maps platform slugs to driver names. Keys use "_" for "-".
var slugDrivers = map[string]string{
	"ios": "cisco_ios", "iosxe": "cisco_ios", "ios_xe": "cisco_ios", "cisco_xe": "cisco_ios",
	"cisco_iosxe": "cisco_ios", "cisco_ios_xe": "cisco_ios",
	"nxos": "cisco_nxos", "nx_os": "cisco_nxos", "cisco_nx_os": "cisco_nxos",
	"iosxr": "cisco_iosxr", "ios_xr": "cisco_iosxr", "cisco_xr": "cisco_iosxr", "cisco_ios_xr": "cisco_iosxr",
	"eos":   "arista_eos",
	"junos": "juniper_junos", "juniper": "juniper_junos",
}

// DriverFor chooses the driver of a platform: its explicit driver wins;
// otherwise the driver is inferred from the slug, "generic" when unknown.
func DriverFor(platformDriver, platformSlug string) string {
	if d := strings.ToLower(strings.TrimSpace(platformDriver)); d != "" {
		return d
	}
	slug := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(platformSlug)), "-", "_")
	if _, ok := drivers[slug]; ok {
		return slug
	}
	if d, ok := slugDrivers[slug]; ok {
		return d
	}
	return "generic"
}
