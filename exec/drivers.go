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
	fortiPrompt  = regexp.MustCompile(`^[\w.\-~]{1,63}( \([\w.\-~ ]{1,63}\))? [#$] ?$`)
	panosPrompt  = regexp.MustCompile(`^[\w.\-]{1,63}@[\w.\-]{1,63}(\([\w.\-]+\))?[>#] ?$`)
	rosPrompt    = regexp.MustCompile(`^\[[\w.\-]{1,63}@[^\]]{1,63}\] ?(<SAFE>)?(/[\w/ .-]*)?> ?$`)
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
	// FortiOS configures in blocks the user's text opens and closes
	// ("config system interface" … "end"); the driver closes any left
	// open with "end", or drops them with "abort" after a refused line.
	// Paging is answered rather than turned off: "set output standard"
	// would change a setting every administrator of the device shares.
	"fortinet": {
		name: "fortinet", prompt: fortiPrompt, configMark: regexp.MustCompile(`\) [#$]$`),
		questions: []question{{regexp.MustCompile(`\(Press 'a' to accept\):\s*$`), "a"}},
		pagers:    []*regexp.Regexp{regexp.MustCompile(`^--More--\s*$`)},
		// A block nests a few levels deep at most.
		configExit:  []string{"end", "end", "end", "end"},
		configAbort: []string{"abort", "abort", "abort", "abort"},
		logout:      "exit",
		errors: []errorPattern{
			re(`^(command|value) parse error before`, InvalidInput),
			re(`^Unknown action`, UnknownCommand),
			re(`^ambiguous command before`, AmbiguousCommand),
			re(`(?i)^(permission denied|access denied)`, PermissionDenied),
			re(`^(Command fail\.|node_check_object fail|entry not found in datasource)`, ConfigRejected),
		},
	},
	// PAN-OS changes a candidate configuration shared by all its
	// administrators: commit applies it, "revert config" drops a change a
	// refused line left half done.
	"paloalto_panos": {
		name: "paloalto_panos", prompt: panosPrompt, configMark: privHash, promptPreamble: junosPreamble,
		loginAnswers: []question{{regexp.MustCompile(`(?i)do you accept`), "yes"}},
		setup:        []string{"set cli pager off"},
		pagers:       []*regexp.Regexp{regexp.MustCompile(`^lines \d+-\d+\s*$`)},
		configEnter:  "configure", configCommit: []string{"commit"},
		configExit: []string{"exit"}, configAbort: []string{"revert config", "exit"},
		logout: "exit",
		errors: []errorPattern{
			re(`^Unknown command: `, UnknownCommand),
			re(`^Invalid syntax\.`, InvalidInput),
			re(`^(Validation Error:|Commit failed|Server error)`, ConfigRejected),
		},
	},
	// RouterOS reads console options after a "+" in the login name:
	// colours off, no terminal detection, a wide and tall terminal. Its
	// commands configure at the prompt, each applied at once.
	"mikrotik_routeros": {
		name: "mikrotik_routeros", prompt: rosPrompt,
		userSuffix: "+ct511w4098h", enter: "\r\n",
		questions: []question{
			{regexp.MustCompile(`Do you want to see the software license\? \[Y/n\]:\s*$`), "n"},
			{regexp.MustCompile(`Please press "Enter" to continue!\s*$`), "\r\n"},
		},
		pagers: []*regexp.Regexp{regexp.MustCompile(`^-- \[Q quit\|.*\]\s*$`)},
		logout: "/quit", unsafe: "[]{}",
		errors: []errorPattern{
			re(`^bad command name `, UnknownCommand),
			re(`^(syntax error|expected end of command|expected command name|invalid value|value of \S+ must be)`, InvalidInput),
			re(`^(not enough permissions|permission denied)`, PermissionDenied),
			re(`^(no such item|failure: |input does not match)`, ConfigRejected),
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
