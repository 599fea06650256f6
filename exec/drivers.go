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

	parenConfig = regexp.MustCompile(`\)#$`) // any "(...)" mode is a config mode

	huaweiPrompt = regexp.MustCompile(`^(HRP_[MS])?(<` + hostChars + `>|\[[~*]?[\w.\-@/:~]{1,127}\])\s?$`)
	huaweiSystem = regexp.MustCompile(`^(HRP_[MS])?\[`)
	exosPrompt   = regexp.MustCompile(`^(\* )?(Slot-\d+ )?` + hostChars + `\.\d+ [#>] ?$`)
	exosBase     = regexp.MustCompile(`^(?:\* )?(?:Slot-\d+ )?(.+?)\.\d+ [#>]`)
	userName     = regexp.MustCompile(`(?i)(user ?name|login):\s?$`)
)

// re compiles one row of an error table.
func re(pattern string, typ string) errorPattern {
	return errorPattern{regexp.MustCompile(pattern), typ}
}

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
	"cisco_asa": {
		name: "cisco_asa", prompt: ciscoPrompt, privMark: privHash, configMark: ciscoConfig,
		enable: "enable", passwordPrompt: passwordLine,
		setup:       []string{"terminal pager 0"},
		pagers:      []*regexp.Regexp{regexp.MustCompile(`^<--- More --->\s*$`)},
		configEnter: "configure terminal", configExit: []string{"end"}, configAbort: []string{"end"},
		logout: "exit",
		errors: []errorPattern{
			re(`^ERROR: % Invalid input detected`, InvalidInput),
			re(`^ERROR: % Incomplete command`, IncompleteCommand),
			re(`^ERROR: % Ambiguous command`, AmbiguousCommand),
			re(`^(ERROR: )?(% )?(Command authorization failed|Permission denied)`, PermissionDenied),
			re(`^ERROR: `, ConfigRejected),
		},
	},
	// ArubaOS-Switch, formerly ProCurve: a banner waits for a key before
	// the first prompt, enable may ask for the manager's user name, and
	// paging can only be turned off once enabled.
	"hp_procurve": {
		name: "hp_procurve", prompt: ciscoPrompt, privMark: privHash, configMark: parenConfig,
		questions: []question{{regexp.MustCompile(`Press any key to continue\s*$`), "\n"}},
		enable:    "enable", enableUser: userName, passwordPrompt: passwordLine,
		setup:       []string{"no page"},
		pagers:      []*regexp.Regexp{regexp.MustCompile(`^\s*-- MORE --, next page: Space, next line: Enter, quit: Control-C\s*$`)},
		configEnter: "configure terminal", configExit: []string{"end"}, configAbort: []string{"end"},
		// "logout" asks whether to log out and whether to save the
		// configuration; closing the connection ends the session without
		// either question.
		logout: "",
		errors: []errorPattern{
			re(`^Invalid input: `, InvalidInput),
			re(`^Incomplete input: `, IncompleteCommand),
			re(`^Ambiguous input: `, AmbiguousCommand),
			re(`^(Not authorized|Permission denied)`, PermissionDenied),
		},
	},
	"aruba_aoscx": {
		name: "aruba_aoscx", prompt: ciscoPrompt, privMark: privHash, configMark: ciscoConfig,
		enable: "enable", passwordPrompt: passwordLine,
		// AOS-CX takes a carriage return as the end of a line.
		enter:       "\r",
		setup:       []string{"no page"},
		pagers:      []*regexp.Regexp{regexp.MustCompile(`^\s*-- MORE --, next page: Space, next line: Enter, quit: q\s*$`)},
		configEnter: "configure terminal", configExit: []string{"end"}, configAbort: []string{"end"},
		logout: "exit",
		errors: []errorPattern{
			re(`^Invalid input: `, InvalidInput),
			re(`^% Command incomplete`, IncompleteCommand),
			re(`^% Ambiguous command`, AmbiguousCommand),
			re(`^% Unknown command`, UnknownCommand),
			re(`^% ?(Permission denied|Insufficient privileges)`, PermissionDenied),
		},
	},
	// OS10 has no enable step: a user's role decides what they may run.
	"dell_os10": {
		name: "dell_os10", prompt: ciscoPrompt, configMark: ciscoConfig,
		setup:       []string{"terminal length 0"},
		pagers:      []*regexp.Regexp{regexp.MustCompile(`(?i)^\s*--more--\s*$`)},
		configEnter: "configure terminal", configExit: []string{"end"}, configAbort: []string{"end"},
		logout: "exit",
		errors: []errorPattern{
			re(`^% Error: Unrecognized command`, UnknownCommand),
			re(`^% Error: Incomplete command`, IncompleteCommand),
			re(`^% Error: Ambiguous command`, AmbiguousCommand),
			re(`^% Error: (Permission denied|Access denied|.*not authorized)`, PermissionDenied),
			re(`^% Error: `, ConfigRejected),
		},
	},
	// FastIron (Brocade, now Ruckus ICX): the prompt carries the access
	// method ("SSH@icx1#"); enable may ask for a user name (RADIUS).
	"brocade_fastiron": {
		name: "brocade_fastiron", prompt: ciscoPrompt, privMark: privHash, configMark: ciscoConfig,
		enable: "enable", enableUser: userName, passwordPrompt: passwordLine,
		setup:       []string{"skip-page-display"},
		pagers:      []*regexp.Regexp{regexp.MustCompile(`^\s*--More--(, next page: Space, next line: Return key, quit: Control-c)?\s*$`)},
		configEnter: "configure terminal", configExit: []string{"end"}, configAbort: []string{"end"},
		logout: "exit",
		errors: []errorPattern{
			re(`^Invalid input -> `, InvalidInput),
			re(`^Incomplete command`, IncompleteCommand),
			re(`^Ambiguous input -> `, AmbiguousCommand),
			re(`^Error - Incorrect (username or )?password`, PermissionDenied),
			re(`^Error - `, ConfigRejected),
		},
	},
	// Huawei VRP: "<host>" user view, "[host...]" in system view. VRP5
	// applies each line; VRP8 edits a candidate and shows "[*host]" while
	// changes are pending, which is when commit is sent. Leaving with a
	// change pending (a refused line) drops it.
	"huawei_vrp": {
		name: "huawei_vrp", prompt: huaweiPrompt, configMark: huaweiSystem,
		questions: []question{
			{regexp.MustCompile(`^Warning: Uncommitted configurations found.*\[Y\(yes\)/N\(no\)/C\(cancel\)\]:\s*$`), "n\n"},
			{regexp.MustCompile(`Change now\? ?\[Y/N\]:?\s*$`), "n\n"},
		},
		setup:       []string{"screen-length 0 temporary"},
		pagers:      []*regexp.Regexp{regexp.MustCompile(`^\s*---- More ----\s*$`)},
		configEnter: "system-view", configCommit: []string{"commit"},
		commitWhen: regexp.MustCompile(`^(HRP_[MS])?\[\*`),
		configExit: []string{"return"}, configAbort: []string{"return"},
		logout: "quit",
		errors: []errorPattern{
			re(`^(Error: ?|% ?)(Unrecognized command|Wrong parameter|Too many parameters)`, InvalidInput),
			re(`^(Error: ?|% ?)Incomplete command`, IncompleteCommand),
			re(`^(Error: ?|% ?)Ambiguous command`, AmbiguousCommand),
			re(`^Error: ?(You do not have permission|Permission denied)`, PermissionDenied),
			re(`^Error: `, ConfigRejected),
		},
	},
	// ExtremeXOS configures at its ordinary prompt, which counts commands
	// ("sw1.5 # ") and opens with "* " while the configuration is unsaved.
	"extreme_exos": {
		name: "extreme_exos", prompt: exosPrompt, base: exosBase,
		setup:  []string{"disable clipaging", "disable cli prompting"},
		pagers: []*regexp.Regexp{regexp.MustCompile(`^Press <SPACE> to continue or <Q> to quit:\s*$`)},
		logout: "exit",
		errors: []errorPattern{
			re(`^%% Invalid input detected`, InvalidInput),
			re(`^%% Incomplete command`, IncompleteCommand),
			re(`^%% Ambiguous command`, AmbiguousCommand),
			re(`^%% Unrecognized command`, UnknownCommand),
			re(`(?i)^(Error: )?Permission denied`, PermissionDenied),
			re(`^Error: `, ConfigRejected),
		},
	},
	"linux": {name: "linux", exec: true},
	"generic": {
		name: "generic", prompt: genericPrompt, configMark: regexp.MustCompile(`\(conf[^)]*\)\s?[>#$%]$`),
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
	"asa":      "cisco_asa",
	"procurve": "hp_procurve", "aruba_procurve": "hp_procurve", "aruba_osswitch": "hp_procurve",
	"arubaos_switch": "hp_procurve", "aruba_os_switch": "hp_procurve", "aos_s": "hp_procurve",
	"aoscx": "aruba_aoscx", "aos_cx": "aruba_aoscx", "arubaos_cx": "aruba_aoscx", "aruba_cx": "aruba_aoscx",
	"os10": "dell_os10", "dellos10": "dell_os10", "dell_emc_os10": "dell_os10",
	"fastiron": "brocade_fastiron", "ruckus_fastiron": "brocade_fastiron", "icx": "brocade_fastiron",
	"ruckus_icx": "brocade_fastiron", "brocade_icx": "brocade_fastiron",
	"huawei": "huawei_vrp", "vrp": "huawei_vrp", "huawei_vrpv8": "huawei_vrp", "vrpv8": "huawei_vrp",
	"huawei_ce": "huawei_vrp", "huawei_cloudengine": "huawei_vrp",
	"exos": "extreme_exos", "extreme": "extreme_exos", "extremexos": "extreme_exos", "xos": "extreme_exos",
}
