package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// command is one CLI command. The table below is the only place a command is declared:
// dispatch, --help, the usage summary and the shell completion scripts all read it.
type command struct {
	path  string // the words that name it: "user create"
	args  string // positional arguments as the synopsis shows them ("USERNAME"); "" = none
	nargs int    // how many positional arguments it takes, at least
	// optional is how many more it may take ("[FILE]").
	optional int
	summary  string
	// flags declares the command's own flags into o; nil = only the common ones.
	flags func(fs *flag.FlagSet, o *opts)
	run   func(ctx context.Context, e env, o *opts) error
	// bare commands take neither --config nor --data (version, completion).
	bare bool
}

// opts is what the flags and arguments of any command parse into; each command binds
// only the fields it uses.
type opts struct {
	common
	args []string
	set  map[string]bool // flags given on the command line

	listen    string // serve
	demo      bool
	demoReset bool

	superuser, passwordStdin bool // user create
	groups                   multiFlag
	init                     bool // make the database of a new install

	readOnly    bool // token create
	expires     lifetime
	description string

	format, startDate, endDate, output string // export logs, backup
	bom                                bool
	passphraseFile, keyFile            string // backup, restore

	user string // service install

	platform, parseCmd, template string // parse

	importType string // import
	dryRun     bool
	allowEmpty bool // inventory sync: remove every synced device when NetBox answers none
}

// commands is every command of the CLI; it is filled in init because the completion
// commands read the table themselves.
var commands []command

func init() {
	commands = []command{
		{path: "serve", summary: "run the HTTP API, the web UI and the schedules",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.listen, "listen", "", "listen on `ADDR`, host:port (default server.listen, 127.0.0.1:8080)")
				fs.BoolVar(&o.demo, "demo", false, "seed demo users, inventory, commands and logs, and print how to use them (the same login and tokens at every start)")
				fs.BoolVar(&o.demoReset, "demo-reset", false, "with --demo (implied): a new admin password, API token and credential token")
			}, run: cmdServe},
		{path: "user create", args: "USERNAME", nargs: 1, summary: "create a user (the password is generated unless --password-stdin)",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.BoolVar(&o.superuser, "superuser", false, "make the user a superuser")
				fs.BoolVar(&o.passwordStdin, "password-stdin", false, "read the password from the first line of stdin")
				fs.Var(&o.groups, "group", "add the user to the group `NAME` (created if missing); repeatable")
				fs.BoolVar(&o.init, "init", false, "make the data directory and its database when there is none: the first user of a new install (else such a directory is refused)")
			}, run: cmdUserCreate},
		{path: "token create", args: "USERNAME", nargs: 1, summary: "create an API token and print its key alone on stdout",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.BoolVar(&o.readOnly, "read-only", false, "the token may only read")
				fs.Var(&o.expires, "expires", "lifetime, a `DURATION`: days (30d), weeks (2w), hours (12h), minutes (90m) or a mix (1d12h) (default: never expires)")
				fs.StringVar(&o.description, "description", "", "`TEXT` saying what the token is for")
			}, run: cmdTokenCreate},
		{path: "export logs", summary: "write command logs as CSV or JSON",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.format, "format", "csv", "`FORMAT`: csv or json")
				fs.StringVar(&o.startDate, "start-date", "", "first day `YYYY-MM-DD` (inclusive), in server.time_zone")
				fs.StringVar(&o.endDate, "end-date", "", "last day `YYYY-MM-DD` (inclusive)")
				fs.StringVar(&o.output, "output", "", "`FILE` to write (default: stdout); written atomically")
				fs.BoolVar(&o.bom, "bom", false, "start a CSV with a UTF-8 byte order mark, for Excel (default: export.bom)")
			}, run: cmdExport},
		{path: "parse", args: "[FILE]", optional: 1, summary: "parse an output (FILE, else stdin) as an execution would; print the parsed_output JSON",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.platform, "platform", "", "the `PLATFORM`: a platform's slug or name in the inventory, or an ntc platform name such as cisco_ios")
				fs.StringVar(&o.parseCmd, "command", "", "the `COMMAND` that printed the output, such as \"show ip interface brief\"")
				fs.StringVar(&o.template, "template", "", "a TextFSM template `FILE` to try instead of looking one up")
			}, run: cmdParse},
		{path: "import", args: "FILE", nargs: 1, summary: "import sites, platforms, devices, interfaces, VLANs and IP addresses from a CSV, YAML or JSON file, all or nothing",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.importType, "type", "", "the object `TYPE` of a list: sites, platforms, devices, interfaces, vlans, ip-addresses or tags (default: from the file name, devices.csv)")
				fs.StringVar(&o.format, "format", "", "`FORMAT`: csv, yaml or json (default: from the file name or the content)")
				fs.BoolVar(&o.dryRun, "dry-run", false, "show what would be created and changed; write nothing")
			}, run: cmdImport},
		{path: "inventory sync", summary: "sync the inventory from the NetBox of the settings (inventory.netbox_url) now",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.BoolVar(&o.allowEmpty, "allow-empty", false, "remove every synced device when NetBox answers none (else such a sync is refused)")
			}, run: cmdInventorySync},
		{path: "backup", summary: "write a backup that restores on its own: a consistent copy of the live database and the master key, sealed under a passphrase",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.output, "output", "", "`FILE` to write the backup to, a tar archive (must not exist)")
				fs.StringVar(&o.passphraseFile, "passphrase-file", "", "read the passphrase that seals the master key from the first line of `FILE` (- for stdin); else "+passphraseEnv)
			}, run: cmdBackup},
		{path: "restore", args: "FILE", nargs: 1, summary: "restore a backup into a data directory without a database: the database and the master key",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.passphraseFile, "passphrase-file", "", "read the backup's passphrase from the first line of `FILE` (- for stdin); else "+passphraseEnv)
				fs.StringVar(&o.keyFile, "key-file", "", "for a backup that is a database alone (made before backups held the key): the install's secret.key `FILE`")
			}, run: cmdRestore},
		{path: "hub site add", args: "NAME", nargs: 1, summary: "on a hub: add a site and print its token (shown only now) for its hub.token",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.description, "description", "", "`TEXT` saying what the site is")
			}, run: cmdHubSiteAdd},
		{path: "hub site list", summary: "on a hub: list the sites and their state (last batch, how far behind, clock skew, version)",
			run: cmdHubSiteList},
		{path: "hub site revoke", args: "NAME", nargs: 1, summary: "on a hub: make a site's token stop working; its records stay",
			run: cmdHubSiteRevoke},
		{path: "hub site token", args: "NAME", nargs: 1, summary: "on a hub: give a site a new token (an edge installed anew) and print it",
			run: cmdHubSiteToken},
		{path: "service install", summary: "install FieldKit as a system service (systemd, SysV or Windows)",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.user, "user", defaultServiceUser, "`NAME` of the account the service runs as on Linux, created if missing (root: no dedicated user)")
			}, run: serviceAction("install")},
		{path: "service uninstall", summary: "remove the service", run: serviceAction("uninstall")},
		{path: "service start", summary: "start the service", run: serviceAction("start")},
		{path: "service stop", summary: "stop the service; running executions finish first", run: serviceAction("stop")},
		{path: "service restart", summary: "restart the service; running executions finish first", run: serviceAction("restart")},
		{path: "service status", summary: "print running, stopped or not installed (exit 0, 3, 4)", run: cmdServiceStatus},
		{path: "completion bash", summary: "print the bash completion script", bare: true, run: completionCmd(bashCompletion)},
		{path: "completion powershell", summary: "print the PowerShell completion script", bare: true, run: completionCmd(powershellCompletion)},
		{path: "version", summary: "print the version", bare: true, run: func(_ context.Context, e env, _ *opts) error {
			fmt.Fprintf(e.stdout, "fieldkit %s\n", version)
			return nil
		}},
	}
}

// usageError is a command line FieldKit cannot run: the process exits 2.
type usageError struct {
	msg  string
	help string // the command whose --help to suggest; "" = the top level
}

func (u *usageError) Error() string { return u.msg }

// exitCode ends the process with a status and no message (service status).
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

// run dispatches the command line.
func run(ctx context.Context, args []string, getenv func(string) string, environ []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := env{getenv: getenv, environ: environ, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		return &usageError{msg: "no command given"}
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 {
			if c, rest := findCommand(args[1:]); c != nil && len(rest) == 0 {
				writeHelp(stdout, c)
				return nil
			}
			if len(args) == 2 && writeGroupHelp(stdout, args[1]) {
				return nil // "help service": its subcommands
			}
			return unknownCommand(args[1:])
		}
		fmt.Fprint(stdout, usage())
		return nil
	case "--version", "-v":
		args = []string{"version"}
	}
	c, rest := findCommand(args)
	if c == nil {
		if len(args) > 1 && isHelp(args[len(args)-1]) && writeGroupHelp(stdout, args[0]) {
			return nil // "service --help": the group's subcommands
		}
		return unknownCommand(args)
	}
	o, err := parseCommand(c, rest)
	if errors.Is(err, flag.ErrHelp) {
		writeHelp(stdout, c)
		return nil
	}
	if err != nil {
		return err
	}
	return c.run(ctx, e, o)
}

// isHelp reports whether an argument asks for help.
func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

// writeGroupHelp writes the usage of a group of commands ("service"): its subcommands
// and what each does. It reports false when no command starts with that word.
func writeGroupHelp(w io.Writer, group string) bool {
	var subs []*command
	for i := range commands {
		if first, _, ok := strings.Cut(commands[i].path, " "); ok && first == group {
			subs = append(subs, &commands[i])
		}
	}
	if len(subs) == 0 {
		return false
	}
	fmt.Fprintf(w, "usage: fieldkit %s SUBCOMMAND [flags]\n\nsubcommands:\n", group)
	width := 0
	for _, c := range subs {
		width = max(width, len(c.path)+len(c.args)+1)
	}
	for _, c := range subs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, strings.TrimSpace(c.path+" "+c.args), c.summary)
	}
	fmt.Fprintf(w, "\nfieldkit %s SUBCOMMAND --help shows a subcommand's flags.\n", group)
	return true
}

// findCommand finds the command the leading words name, the longest match winning.
func findCommand(args []string) (*command, []string) {
	var best *command
	var rest []string
	for i := range commands {
		words := strings.Fields(commands[i].path)
		if len(words) > len(args) || (best != nil && len(words) <= len(strings.Fields(best.path))) {
			continue
		}
		if strings.Join(args[:len(words)], " ") == commands[i].path {
			best, rest = &commands[i], args[len(words):]
		}
	}
	return best, rest
}

// unknownCommand names what is wrong: an unknown command, or a group ("service") with a
// missing or unknown subcommand.
func unknownCommand(args []string) error {
	var subs []string
	for _, c := range commands {
		if group, sub, ok := strings.Cut(c.path, " "); ok && group == args[0] {
			subs = append(subs, sub)
		}
	}
	if len(subs) == 0 {
		return &usageError{msg: fmt.Sprintf("unknown command %q", args[0])}
	}
	if len(args) == 1 {
		return &usageError{msg: fmt.Sprintf("%s: missing subcommand (one of %s)", args[0], strings.Join(subs, ", "))}
	}
	return &usageError{msg: fmt.Sprintf("%s: unknown subcommand %q (one of %s)", args[0], args[1], strings.Join(subs, ", "))}
}

// flagSet declares a command's flags: the common ones, then its own.
func flagSet(c *command, o *opts) *flag.FlagSet {
	fs := flag.NewFlagSet("fieldkit "+c.path, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned and printed once, by main
	if !c.bare {
		fs.StringVar(&o.config, "config", "", "YAML config `FILE` (also FIELDKIT_CONFIG)")
		fs.StringVar(&o.data, "data", "", "the data `DIR` (default $FIELDKIT_DATA, else ./fieldkit-data)")
	}
	if c.flags != nil {
		c.flags(fs, o)
	}
	return fs
}

// parseCommand parses a command's flags and checks its positional arguments: an
// unknown flag, a stray argument or a missing one is a usage error naming it.
func parseCommand(c *command, args []string) (*opts, error) {
	o := &opts{set: map[string]bool{}}
	fs := flagSet(c, o)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	if err != nil {
		return nil, &usageError{msg: "fieldkit " + c.path + ": " + err.Error(), help: c.path}
	}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	switch {
	case len(pos) > c.nargs+c.optional:
		extra := make([]string, 0, len(pos)-c.nargs-c.optional)
		for _, a := range pos[c.nargs+c.optional:] {
			extra = append(extra, strconv.Quote(a))
		}
		return nil, &usageError{msg: fmt.Sprintf("fieldkit %s: unexpected argument %s", c.path, strings.Join(extra, ", ")), help: c.path}
	case len(pos) < c.nargs:
		return nil, &usageError{msg: fmt.Sprintf("fieldkit %s: missing %s", c.path, c.args), help: c.path}
	}
	o.args = pos
	return o, nil
}

// parseArgs parses flags wherever they stand among the positional arguments, so that
// "user create alice --superuser" works as well as "user create --superuser alice".
// Everything after "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// synopsis is a command's one-line usage.
func (c *command) synopsis() string {
	s := "fieldkit " + c.path
	if c.args != "" {
		s += " " + c.args
	}
	if c.flags != nil || !c.bare {
		s += " [flags]"
	}
	return s
}

func writeHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: %s\n\n%s.\n", c.synopsis(), strings.ToUpper(c.summary[:1])+c.summary[1:])
	first := true
	flagSet(c, &opts{}).VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprintln(w, "\nflags:")
			first = false
		}
		arg, text := flag.UnquoteUsage(f)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			arg = ""
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0s" {
			text += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  --%s\n      %s\n", strings.TrimSpace(f.Name+" "+arg), text)
	})
}

// usage is the top-level help, listing every command.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: fieldkit COMMAND [flags]\n\ncommands:\n")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.path)+len(c.args)+1)
	}
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, strings.TrimSpace(c.path+" "+c.args), c.summary)
	}
	b.WriteString("\nEvery command but version and completion takes --config FILE and --data DIR.\n" +
		"fieldkit COMMAND --help shows a command's flags.\n")
	return b.String()
}

// groups are the first words of the commands, sorted, and the subcommands of each.
func commandTree() (top []string, subs map[string][]string) {
	subs = map[string][]string{}
	seen := map[string]bool{}
	for _, c := range commands {
		first, sub, _ := strings.Cut(c.path, " ")
		if !seen[first] {
			seen[first] = true
			top = append(top, first)
		}
		if sub != "" {
			subs[first] = append(subs[first], sub)
		}
	}
	sort.Strings(top)
	return top, subs
}
