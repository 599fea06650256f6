package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kardianos/service"

	"fieldkit/handlers"
)

const serviceName = "fieldkit"

// defaultServiceUser is the account the Linux service runs as unless --user says
// otherwise; "root" keeps the service as root.
const defaultServiceUser = "fieldkit"

// maxExecution is the longest execution the API runs.
const maxExecution = handlers.MaxTimeout * time.Second

// stopMargin is what a service manager waits beyond server.shutdown_timeout before it
// gives up on a stop: the process itself gives up at shutdown_timeout, so the manager
// never kills a server that is still finishing an execution.
const stopMargin = 30 * time.Second

// install is what a service install needs to know, with every path absolute: Windows
// starts services in System32 and systemd in /.
type install struct {
	exe, config, data string
	user              string        // Linux account the service runs as; "" or "root" = root
	stopTimeout       time.Duration // how long the manager waits for a stop
}

func newInstall(configFile, dataDir, user string, shutdown time.Duration) (install, error) {
	exe, err := os.Executable()
	if err != nil {
		return install{}, fmt.Errorf("service: find executable: %w", err)
	}
	in := install{user: user, stopTimeout: shutdown + stopMargin}
	if in.exe, err = filepath.Abs(exe); err != nil {
		return in, err
	}
	if in.data, err = filepath.Abs(dataDir); err != nil {
		return in, err
	}
	if configFile != "" {
		if in.config, err = filepath.Abs(configFile); err != nil {
			return in, err
		}
	}
	if in.user == "root" {
		in.user = ""
	}
	return in, nil
}

// args is the command line the service runs.
func (in install) args() []string {
	args := []string{"serve"}
	if in.config != "" {
		args = append(args, "--config", in.config)
	}
	return append(args, "--data", in.data)
}

// serviceConfig describes the service to kardianos/service. The systemd unit and the
// SysV script are rendered here (service_files.go) rather than by the library's
// templates: those lack readiness, the stop timeout, reload and a dedicated user.
// Windows gets recovery actions (restart after 10 s, counted over a day) and a delayed
// automatic start, so that the network is up first.
func serviceConfig(in install) (*service.Config, error) {
	unit, err := systemdUnit(in)
	if err != nil {
		return nil, err
	}
	script, err := sysvScript(in)
	if err != nil {
		return nil, err
	}
	sc := &service.Config{
		Name:             serviceName,
		DisplayName:      "FieldKit",
		Description:      serviceDescription,
		Executable:       in.exe,
		Arguments:        in.args(),
		WorkingDirectory: in.data,
		Option: service.KeyValue{
			"SystemdScript":          unit,
			"SysvScript":             script,
			"Restart":                "on-failure",
			"LogOutput":              false,
			"StartType":              "automatic",
			"DelayedAutoStart":       true,
			"OnFailure":              "restart",
			"OnFailureDelayDuration": "10s",
			"OnFailureResetPeriod":   86400,
		},
	}
	if runtime.GOOS != "windows" {
		// Windows runs the service as LocalSystem: a named account there needs a
		// password the installer does not have.
		sc.UserName = in.user
	}
	return sc, nil
}

const serviceDescription = "FieldKit: run commands on network devices over SSH, with an audit log and a NetBox-compatible API."

// program adapts serve to the service manager: Start must return at once.
type program struct {
	e      env
	cfg    Config
	so     serveOptions
	cancel context.CancelFunc
	done   chan error
}

func (p *program) Start(service.Service) error {
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan error, 1)
	go func() { p.done <- serve(ctx, p.e, p.cfg, p.so) }()
	return nil
}

func (p *program) Stop(service.Service) error {
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	select {
	case err := <-p.done:
		return err
	case <-time.After(p.cfg.Server.ShutdownTimeout + 5*time.Second):
		return errors.New("service: shutdown timed out")
	}
}

// runService runs serve under a service manager.
func runService(e env, cfg Config, so serveOptions) error {
	in, err := newInstall("", cfg.Server.Data, "", cfg.Server.ShutdownTimeout)
	if err != nil {
		return err
	}
	sc, err := serviceConfig(in)
	if err != nil {
		return err
	}
	s, err := service.New(&program{e: e, cfg: cfg, so: so}, sc)
	if err != nil {
		return err
	}
	return s.Run()
}

// serviceAction runs install, uninstall, start, stop or restart.
func serviceAction(action string) func(context.Context, env, *opts) error {
	return func(ctx context.Context, e env, o *opts) error {
		// a service that cannot start is worse than an install that refuses
		cfg, err := o.load(e, nil)
		if err != nil {
			return err
		}
		configFile := o.config
		if configFile == "" {
			configFile = e.getenv("FIELDKIT_CONFIG")
		}
		in, err := newInstall(configFile, cfg.Server.Data, o.user, cfg.Server.ShutdownTimeout)
		if err != nil {
			return err
		}
		s, err := newService(in)
		if err != nil {
			return err
		}
		switch action {
		case "install":
			err = installService(ctx, e, s, in)
		case "uninstall":
			err = uninstallService(e, s)
		default:
			err = service.Control(s, action)
		}
		if err != nil {
			return fmt.Errorf("service %s: %w", action, err)
		}
		fmt.Fprintf(e.stderr, "service %s: done (%s)\n", action, s.Platform())
		return nil
	}
}

func newService(in install) (service.Service, error) {
	sc, err := serviceConfig(in)
	if err != nil {
		return nil, err
	}
	s, err := service.New(&program{}, sc)
	if err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	return s, nil
}

// installService prepares the account and the data directory, then installs.
func installService(ctx context.Context, e env, s service.Service, in install) error {
	if runtime.GOOS != "windows" {
		if os.Geteuid() != 0 {
			return errors.New("installing a service needs root: run it with sudo")
		}
		if err := prepareAccount(ctx, e, in, runCommand); err != nil {
			return err
		}
	}
	return service.Control(s, "install")
}

// uninstallService stops a running service first, so that nothing is left running
// without a unit, then removes it and, for SysV, every runlevel link to its script.
// The data directory and the service account stay.
func uninstallService(e env, s service.Service) error {
	if serviceStatus(s).code == 0 {
		if err := s.Stop(); err != nil {
			return fmt.Errorf("stop before uninstall: %w", err)
		}
	}
	if err := s.Uninstall(); err != nil {
		return err
	}
	if s.Platform() == sysvPlatform {
		removed, err := removeRunlevelLinks("/etc", "/etc/init.d/"+serviceName)
		for _, l := range removed {
			fmt.Fprintf(e.stderr, "removed %s\n", l)
		}
		return err
	}
	return nil
}

// removeRunlevelLinks deletes the links in root/rc?.d that point at script.
func removeRunlevelLinks(root, script string) ([]string, error) {
	links, err := filepath.Glob(filepath.Join(root, "rc[0-6S].d", "*"))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, l := range links {
		target, err := os.Readlink(l)
		if err != nil {
			continue // not a link
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(l), target)
		}
		if filepath.Clean(target) != script {
			continue
		}
		if err := os.Remove(l); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, l)
	}
	return removed, errors.Join(errs...)
}

// sysvPlatform is kardianos/service's name for SysV init.
const sysvPlatform = "unix-systemv"

// serviceState is what `service status` prints, with its exit status (LSB's for a
// status action: 0 running, 3 not running, 4 unknown).
type serviceState struct {
	word string
	code int
}

func cmdServiceStatus(_ context.Context, e env, o *opts) error {
	cfg, err := o.load(e, nil)
	if err != nil {
		return err
	}
	in, err := newInstall("", cfg.Server.Data, "", cfg.Server.ShutdownTimeout)
	if err != nil {
		return err
	}
	s, err := newService(in)
	if err != nil {
		return err
	}
	st := serviceStatus(s)
	fmt.Fprintln(e.stdout, st.word)
	if st.code != 0 {
		return exitCode(st.code)
	}
	return nil
}

// serviceStatus asks the service manager. A SysV script answers by its exit status,
// which the library reads as a failure; it is asked directly.
func serviceStatus(s service.Service) serviceState {
	if s.Platform() == sysvPlatform {
		return sysvStatus("/etc/init.d/" + serviceName)
	}
	st, err := s.Status()
	switch {
	case errors.Is(err, service.ErrNotInstalled):
		return serviceState{"not installed", 4}
	case err != nil && strings.Contains(err.Error(), "failed"):
		return serviceState{"stopped (failed)", 3}
	case err != nil:
		return serviceState{"unknown: " + err.Error(), 4}
	case st == service.StatusRunning:
		return serviceState{"running", 0}
	case st == service.StatusStopped:
		return serviceState{"stopped", 3}
	}
	return serviceState{"unknown", 4}
}
