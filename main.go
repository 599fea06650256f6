// FieldKit runs named commands on routers and switches over SSH, shows raw and parsed
// output, and keeps an audit log, behind the REST API of a NetBox command-execution
// plugin. This file is wiring only.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Environ(), os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitStatus(err, os.Stderr))
}

// exitStatus prints err once and returns the process's exit status: 0 on success, 2
// for a command line that cannot run (with a pointer to --help), the code of an
// exitCode as is, else 1.
func exitStatus(err error, stderr io.Writer) int {
	var ue *usageError
	var code exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "fieldkit:", strings.TrimPrefix(ue.msg, "fieldkit "))
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", strings.TrimSpace("fieldkit "+ue.help))
		return 2
	}
	fmt.Fprintln(stderr, "fieldkit:", err)
	return 1
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
