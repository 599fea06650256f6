// FieldKit runs named commands on routers and switches over SSH, shows raw and parsed
// output, and keeps an audit log, behind the REST API of a NetBox command-execution
// plugin. This file is wiring only.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Environ(), os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fieldkit:", err)
		os.Exit(1)
	}
}

// env is what a command sees of the process: arguments aside, everything comes in here
// so that tests can run commands in-process.
type env struct {
	getenv  func(string) string
	environ []string
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
}

// run dispatches the command line.
func run(ctx context.Context, args []string, getenv func(string) string, environ []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := env{getenv: getenv, environ: environ, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, e, args[1:])
	case "user":
		return cmdUser(ctx, e, args[1:])
	case "token":
		return cmdToken(ctx, e, args[1:])
	case "export":
		return cmdExport(ctx, e, args[1:])
	case "backup":
		return cmdBackup(ctx, e, args[1:])
	case "service":
		return cmdService(ctx, e, args[1:])
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "fieldkit %s\n", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

const usage = `usage:
  fieldkit serve   [--config FILE] [--data DIR] [--listen ADDR] [--demo]
  fieldkit user create USERNAME [--superuser] [--password-stdin] [--group NAME]...
  fieldkit token create USERNAME [--read-only] [--expires DURATION] [--description TEXT]
  fieldkit service install|uninstall|start|stop|restart|status [--config FILE] [--data DIR]
  fieldkit export logs [--format csv|json] [--start-date YYYY-MM-DD] [--end-date YYYY-MM-DD] [--output FILE]
  fieldkit backup --output FILE
  fieldkit version
Every command also takes --config FILE and --data DIR.
`
