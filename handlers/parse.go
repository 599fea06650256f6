package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"time"

	"fieldkit/exec"
	"fieldkit/exec/textfsm"
	"fieldkit/store"
	"fieldkit/web"
)

// ParseRequest is an output to parse without a device, for template authors and tests:
// the body of POST /api/plugins/toolkit/parse/ and the arguments of `fieldkit parse`.
type ParseRequest struct {
	Platform string // a platform's slug or name, or an ntc platform name
	Command  string
	Output   string
	Template string // a template's text to try instead of the lookup; "" = look up
	// TemplateName names Template in parsed_output.template and in errors;
	// TemplateFromRequest when empty.
	TemplateName string
}

const (
	// MaxTemplateChars bounds a template sent to be tried; ntc's largest is 19,000
	// characters.
	MaxTemplateChars = 64 << 10
	// TemplateTimeout bounds the parse with a template sent to be tried (one regex match
	// is bounded on its own, at 5 s, so a parse stops within about twice this).
	TemplateTimeout = 5 * time.Second
	// TemplateFromRequest is parsed_output.template when the request's template parsed.
	TemplateFromRequest = "request"
	maxParseCommand     = 1000
	maxParsePlatform    = 100
)

// TemplateError is a template sent to be tried that does not compile.
type TemplateError struct{ Err error }

func (e *TemplateError) Error() string { return e.Err.Error() }
func (e *TemplateError) Unwrap() error { return e.Err }

var errTemplateTimeout = fmt.Errorf("the template took longer than %s", TemplateTimeout)

// ParsePlatforms is the TextFSM candidate list for a platform named in a parse request.
// A platform of the inventory (db may be nil) found by its slug, else by its name, among
// those visible lets through, gives its slug, name and driver exactly as an execution on
// one of its devices does; any other key is read as an ntc platform name.
func ParsePlatforms(ctx context.Context, db *store.DB, key string, visible store.Expr) ([]string, error) {
	if db != nil {
		p, err := db.PlatformNamed(ctx, key, visible)
		switch {
		case err == nil:
			slug, _ := p["slug"].(string)
			name, _ := p["name"].(string)
			driver, _ := p["driver"].(string)
			return textfsm.Platforms(slug, name, exec.DriverFor(driver, slug)), nil
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	return textfsm.Platforms(key, "", ""), nil
}

// Parse parses req.Output as an execution of req.Command on a device of req.Platform
// would be parsed — the same candidates, lookup and parsed_output — or, when req.Template
// is set, with that template (bounded by TemplateTimeout). A template that does not
// compile is a *TemplateError; one that fails while parsing is an unsuccessful result,
// as a library template's failure is.
func Parse(ctx context.Context, db *store.DB, lib *textfsm.Library, visible store.Expr, req ParseRequest) (textfsm.Parsed, error) {
	if req.Template != "" {
		return tryTemplate(ctx, req)
	}
	if lib == nil {
		return notParsed("no templates loaded"), nil
	}
	platforms, err := ParsePlatforms(ctx, db, req.Platform, visible)
	if err != nil {
		return textfsm.Parsed{}, err
	}
	parsed := lib.Parse(platforms, req.Command, req.Output)
	if parsed.Data == nil {
		parsed.Data = []map[string]any{}
	}
	return parsed, nil
}

func tryTemplate(ctx context.Context, req ParseRequest) (textfsm.Parsed, error) {
	name := req.TemplateName
	if name == "" {
		name = TemplateFromRequest
	}
	t, err := textfsm.Compile(name, req.Template)
	if err != nil {
		return textfsm.Parsed{}, &TemplateError{Err: err}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, TemplateTimeout, errTemplateTimeout)
	defer cancel()
	data, err := t.ParseContext(ctx, req.Output)
	if err != nil {
		return notParsed("template error: " + err.Error()), nil
	}
	if data == nil {
		data = []map[string]any{}
	}
	method := "textfsm"
	return textfsm.Parsed{Success: true, Method: &method, Template: &name, Data: data, Columns: t.Columns()}, nil
}

// templateTrials bounds the templates sent to be tried that parse at once: each may
// keep a core busy for its whole time bound.
var templateTrials = make(chan struct{}, runtime.GOMAXPROCS(0))

// parseOutput answers POST /api/plugins/toolkit/parse/: view permission on commands,
// then the body, then the parse. The answer is 200 with parsed_output whether or not a
// template matched, as an execution's is.
func (a *API) parseOutput(w http.ResponseWriter, r *http.Request) error {
	scope, err := a.scope(r, store.TypeCommand, "view")
	if err != nil {
		return err
	}
	if !scope.Granted {
		return web.Forbidden("")
	}
	f, err := web.DecodeForm(r, "platform", "command", "output", "template")
	if err != nil {
		return err
	}
	req := readParseRequest(f)
	if err := f.Err(); err != nil {
		return err
	}
	platforms, err := a.scope(r, store.TypePlatform, "view")
	if err != nil {
		return err
	}
	visible := store.False
	if platforms.Granted {
		visible = platforms.Expr
	}
	ctx := r.Context()
	if req.Template != "" {
		select {
		case templateTrials <- struct{}{}:
			defer func() { <-templateTrials }()
		case <-ctx.Done():
			return web.Detail(http.StatusServiceUnavailable, "The client went away while other templates were being tried.")
		}
	}
	parsed, err := Parse(ctx, a.DB, a.Exec.TextFSM, visible, req)
	if te := (*TemplateError)(nil); errors.As(err, &te) {
		return web.BadRequest("template", te.Error())
	}
	if err != nil {
		return err
	}
	web.Write(w, http.StatusOK, map[string]any{"parsed_output": parsed})
	return nil
}

// readParseRequest reads the body's fields: output always (it may be empty), platform
// and command unless a template is sent.
func readParseRequest(f *web.Form) ParseRequest {
	var req ParseRequest
	req.Template, _ = f.Str("template", false, MaxTemplateChars)
	lookup := req.Template == "" && !f.Errs.Has("template")
	req.Platform, _ = f.Str("platform", lookup, maxParsePlatform)
	req.Command, _ = f.Str("command", lookup, maxParseCommand)
	if !f.Has("output") {
		f.Errs.Add("output", "This field is required.")
	}
	req.Output, _ = f.Str("output", false, 0)
	return req
}
