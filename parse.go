package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"fieldkit/exec/textfsm"
	"fieldkit/handlers"
	"fieldkit/store"
	"fieldkit/web"
)

// cmdParse parses an output without a device, as POST /api/plugins/toolkit/parse/ does,
// and prints the same JSON. The platform is looked up in the inventory when the data
// directory has a database (nothing is created otherwise); templates come from
// textfsm.templates_dir, then the built-ins, as for serve. No template, or a template
// that fails, exits 1 after the JSON.
func cmdParse(ctx context.Context, e env, o *opts) error {
	if o.template == "" && (o.platform == "" || o.parseCmd == "") {
		return &usageError{msg: "fieldkit parse: --platform and --command are required (or --template FILE)", help: "parse"}
	}
	cfg, err := o.load(e, nil)
	if err != nil {
		return err
	}
	req := handlers.ParseRequest{Platform: o.platform, Command: o.parseCmd}
	if o.template != "" {
		b, err := readInput(o.template, nil, 4*handlers.MaxTemplateChars)
		if err != nil {
			return fmt.Errorf("template: %w", err)
		}
		req.Template, req.TemplateName = string(b), o.template
	}
	input := "-"
	if len(o.args) == 1 {
		input = o.args[0]
	}
	out, err := readInput(input, e.stdin, cfg.Exec.MaxOutputBytes)
	if err != nil {
		return fmt.Errorf("output: %w", err)
	}
	req.Output = string(out)
	lib, problems := textfsm.Load(cfg.TextFSM.TemplatesDir, nil)
	for _, p := range problems {
		fmt.Fprintln(e.stderr, "fieldkit: warning: textfsm template rejected:", p)
	}
	var db *store.DB
	if path := filepath.Join(cfg.Server.Data, "fieldkit.db"); fileExists(path) {
		if db, err = store.Open(ctx, path, store.Logger(cliLogger(cfg, e))); err != nil {
			return fmt.Errorf("inventory: %w", err)
		}
		defer db.Close()
	}
	parsed, err := handlers.Parse(ctx, db, lib, store.True, req)
	if err != nil {
		return err
	}
	b, err := web.Marshal(map[string]any{"parsed_output": parsed})
	if err != nil {
		return err
	}
	if _, err := e.stdout.Write(b); err != nil {
		return err
	}
	if !parsed.Success {
		return errors.New(parsed.Error)
	}
	return nil
}

// readInput reads the file at path, or stdin for "-", refusing more than limit bytes.
func readInput(path string, stdin io.Reader, limit int) ([]byte, error) {
	r, name := stdin, "stdin"
	if path != "-" || stdin == nil {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r, name = f, path
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("%s is longer than %d bytes", name, limit)
	}
	return b, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
