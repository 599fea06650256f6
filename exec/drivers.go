package exec

import "regexp"

// Prompt building blocks: a host name of the usual characters, optional
// "(config...)" mode, then the privilege character.
const (
	hostChars = `[\w.\-@/:~]{1,63}`
	modePart  = `(\([\w.\-@/:+ ]{0,40}\))?`
)

var (
	ciscoPrompt  = regexp.MustCompile(`^` + hostChars + modePart + `[>#]\s?$`)
	privHash     = regexp.MustCompile(`#$`)
	ciscoConfig  = regexp.MustCompile(`\(conf[^)]*\)#$`)
	passwordLine = regexp.MustCompile(`(?i)password:\s?$`)
	ciscoMore    = regexp.MustCompile(`^\s*-+\s?More\s?-+\s*$`)
	junosMore    = regexp.MustCompile(`^\s*---\(more( \d+%)?\)---\s*$`)

	junosPrompt   = regexp.MustCompile(`^` + hostChars + `[>#%]\s?$`)
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
		name: "cisco_ios", prompt: ciscoPrompt, privMark: privHash, configMark: ciscoConfig,
		enable: "enable", passwordPrompt: passwordLine,
		setup:       []string{"terminal length 0"},
		pagers:      []*regexp.Regexp{ciscoMore},
		configEnter: "configure terminal", configExit: []string{"end"}, configAbort: []string{"end"},
		logout: "exit", errors: ciscoErrors,
	},
	"cisco_nxos": {
		name: "cisco_nxos", prompt: ciscoPrompt, privMark: privHash, configMark: ciscoConfig,
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
		name: "cisco_iosxr", prompt: ciscoPrompt, configMark: ciscoConfig,
		setup:       []string{"terminal length 0"},
		pagers:      []*regexp.Regexp{ciscoMore},
		questions:   []question{{regexp.MustCompile(`^Uncommitted changes found, commit them.*\[cancel\]:\s*$`), "cancel\n"}},
		configEnter: "configure terminal", configCommit: []string{"commit"},
		configExit: []string{"end"}, configAbort: []string{"abort"},
		logout: "exit",
		errors: append([]errorPattern{
			{regexp.MustCompile(`^% ?(Failed to commit|Verification of the configuration failed)`), ConfigRejected},
			{regexp.MustCompile(`^!!% `), ConfigRejected},
		}, ciscoErrors...),
	},
	"arista_eos": {
		name: "arista_eos", prompt: ciscoPrompt, privMark: privHash, configMark: ciscoConfig,
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
		name: "juniper_junos", prompt: junosPrompt, configMark: privHash, promptPreamble: junosPreamble,
		setup:       []string{"set cli screen-length 0"},
		pagers:      []*regexp.Regexp{junosMore},
		questions:   []question{{regexp.MustCompile(`^Exit with uncommitted changes\? \[yes,no\] \(yes\)\s*$`), "no\n"}},
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

// slugDrivers maps platform slugs to driver names. Keys use "_" for "-".
var slugDrivers = map[string]string{
	"ios": "cisco_ios", "iosxe": "cisco_ios", "ios_xe": "cisco_ios", "cisco_xe": "cisco_ios",
	"cisco_iosxe": "cisco_ios", "cisco_ios_xe": "cisco_ios",
	"nxos": "cisco_nxos", "nx_os": "cisco_nxos", "cisco_nx_os": "cisco_nxos",
	"iosxr": "cisco_iosxr", "ios_xr": "cisco_iosxr", "cisco_xr": "cisco_iosxr", "cisco_ios_xr": "cisco_iosxr",
	"eos":   "arista_eos",
	"junos": "juniper_junos", "juniper": "juniper_junos",
}
