package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kardianos/service"
)

const serviceName = "fieldkit"

// serviceConfig describes the installed service. Windows starts services in System32
// and systemd in /, so every path handed to the service is made absolute here.
func serviceConfig(configFile, dataDir string) (*service.Config, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("service: find executable: %w", err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return nil, err
	}
	data, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	args := []string{"serve"}
	if configFile != "" {
		abs, err := filepath.Abs(configFile)
		if err != nil {
			return nil, err
		}
		args = append(args, "--config", abs)
	}
	args = append(args, "--data", data)
	return &service.Config{
		Name:             serviceName,
		DisplayName:      "FieldKit",
		Description:      "FieldKit: run commands on network devices over SSH, with an audit log and a NetBox-compatible API.",
		Executable:       exe,
		Arguments:        args,
		WorkingDirectory: data,
		Option:           service.KeyValue{"Restart": "on-failure", "LogOutput": false},
	}, nil
}

// program adapts serve to the service manager: Start must return at once.
type program struct {
	e      env
	cfg    Config
	demo   bool
	cancel context.CancelFunc
	done   chan error
}

func (p *program) Start(service.Service) error {
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan error, 1)
	go func() { p.done <- serve(ctx, p.e, p.cfg, p.demo, nil) }()
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

// runService runs serve under the service manager, logging to <data>/fieldkit.log
// because a service has no terminal.
func runService(e env, cfg Config, demo bool) error {
	if err := os.MkdirAll(cfg.Server.Data, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(cfg.Server.Data, "fieldkit.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	e.stdout, e.stderr = f, f
	sc, err := serviceConfig("", cfg.Server.Data)
	if err != nil {
		return err
	}
	s, err := service.New(&program{e: e, cfg: cfg, demo: demo}, sc)
	if err != nil {
		return err
	}
	return s.Run()
}

func cmdService(ctx context.Context, e env, args []string) error {
	const u = "usage: fieldkit service install|uninstall|start|stop|restart|status [--config FILE] [--data DIR]"
	if len(args) == 0 {
		return errors.New(u)
	}
	action := args[0]
	fs, c := newFlags("service "+action, e)
	if _, err := parseArgs(fs, args[1:]); err != nil {
		return err
	}
	// a service that cannot start is worse than an install that refuses
	cfg, err := c.load(e, nil)
	if err != nil {
		return err
	}
	configFile := c.config
	if configFile == "" {
		configFile = e.getenv("FIELDKIT_CONFIG")
	}
	sc, err := serviceConfig(configFile, cfg.Server.Data)
	if err != nil {
		return err
	}
	s, err := service.New(&program{}, sc)
	if err != nil {
		return fmt.Errorf("service: %w", err)
	}
	switch action {
	case "status":
		st, err := s.Status()
		if err != nil {
			return fmt.Errorf("service status: %w", err)
		}
		fmt.Fprintln(e.stdout, map[service.Status]string{service.StatusRunning: "running", service.StatusStopped: "stopped"}[st]+statusUnknown(st))
		return nil
	case "install", "uninstall", "start", "stop", "restart":
		if err := service.Control(s, action); err != nil {
			return fmt.Errorf("service %s: %w", action, err)
		}
		fmt.Fprintf(e.stderr, "service %s: done (%s)\n", action, s.Platform())
		return nil
	}
	return errors.New(u)
}

func statusUnknown(st service.Status) string {
	if st == service.StatusUnknown {
		return "unknown"
	}
	return ""
}
