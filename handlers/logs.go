package handlers

import (
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"fieldkit/store"
	"fieldkit/web"
)

// logScope is the viewer's scope on command logs; no view permission at all is a 403.
func (a *API) logScope(r *http.Request) (store.Expr, error) {
	s, err := a.scope(r, store.TypeCommandLog, "view")
	if err != nil {
		return store.Expr{}, err
	}
	if !s.Granted {
		return store.Expr{}, web.Forbidden("")
	}
	return s.Expr, nil
}

// logStatistics answers command-logs/statistics/ over the logs the user may view.
func (a *API) logStatistics(w http.ResponseWriter, r *http.Request) error {
	where, err := a.logScope(r)
	if err != nil {
		return err
	}
	fe := web.FieldErrors{}
	for _, k := range slices.Sorted(maps.Keys(r.URL.Query())) {
		fe.Add(k, "Unknown parameter: statistics take no parameters.")
	}
	if err := fe.Err(); err != nil {
		return err
	}
	st, err := a.DB.LogStatistics(r.Context(), where, a.DB.Now())
	if err != nil {
		return err
	}
	top := make([]any, len(st.TopCommands))
	for i, c := range st.TopCommands {
		top[i] = map[string]any{"command_name": c.Name, "count": c.Count}
	}
	errs := make([]any, len(st.CommonErrors))
	for i, c := range st.CommonErrors {
		errs[i] = map[string]any{"error": c.Name, "count": c.Count}
	}
	web.Write(w, http.StatusOK, map[string]any{
		"total_logs":   st.Total,
		"success_rate": st.SuccessRate,
		"last_24h": map[string]any{"total": st.Last24h.Total, "successful": st.Last24h.Successful,
			"failed": st.Last24h.Failed},
		"top_commands":  top,
		"common_errors": errs,
	})
	return nil
}

// exportParams are the export's own query parameters; every other one is a list filter.
var exportParams = map[string]bool{"format": true, "start_date": true, "end_date": true, "include_output": true, "q": true, "bom": true}

// exportRequest is a parsed export query.
type exportRequest struct {
	format        string
	includeOutput bool
	bom           bool // a CSV starts with a UTF-8 byte order mark (Excel)
	where         store.Expr
}

// parseExport reads format, the date range, include_output and every log list filter;
// anything else is a 400 naming the parameter.
func (a *API) parseExport(r *http.Request) (exportRequest, error) {
	vals := r.URL.Query()
	fe := web.FieldErrors{}
	req := exportRequest{format: store.FormatJSON}
	if v := vals.Get("format"); v != "" {
		if v != store.FormatJSON && v != store.FormatCSV {
			fe.Add("format", `Unknown format: use "csv" or "json".`)
		}
		req.format = v
	}
	if v := vals.Get("include_output"); v != "" {
		b, err := boolParam(v)
		if err != nil {
			fe.Add("include_output", "Must be a valid boolean.")
		}
		req.includeOutput = b
	}
	if v := vals.Get("bom"); v != "" {
		b, err := boolParam(v)
		switch {
		case err != nil:
			fe.Add("bom", "Must be a valid boolean.")
		case b && req.format != store.FormatCSV:
			fe.Add("bom", "A byte order mark applies to format=csv only.")
		}
		req.bom = b
	}
	var where []store.Expr
	start, end := a.day(fe, vals.Get("start_date"), "start_date"), a.day(fe, vals.Get("end_date"), "end_date")
	if !start.IsZero() && !end.IsZero() && end.Before(start) {
		fe.Add("end_date", "The end date is before the start date.")
	}
	if !end.IsZero() {
		end = end.AddDate(0, 0, 1) // inclusive: up to the end of that day
	}
	where = append(where, store.CreatedBetween(start, end))
	if s := strings.TrimSpace(vals.Get("q")); s != "" {
		search, err := store.CommandLogs.Search(r.Context(), a.DB, s)
		if err != nil {
			return exportRequest{}, err
		}
		where = append(where, search)
	}
	for _, key := range slices.Sorted(maps.Keys(vals)) {
		if exportParams[key] {
			continue
		}
		e, err := store.CommandLogs.FilterExpr(key, vals[key])
		if err != nil {
			fe.Add(key, err.Error())
			continue
		}
		where = append(where, e)
	}
	req.where = store.And(where...)
	return req, fe.Err()
}

// day reads an optional YYYY-MM-DD parameter in the configured time zone.
func (a *API) day(fe web.FieldErrors, v, name string) (t time.Time) {
	if v == "" {
		return t
	}
	d, err := store.ParseDay(v, a.Location)
	if err != nil {
		fe.Add(name, "Enter a valid date (YYYY-MM-DD).")
		return t
	}
	return d
}

// logExport streams the logs the user may view, filtered, as JSON or a CSV download.
func (a *API) logExport(w http.ResponseWriter, r *http.Request) error {
	scope, err := a.logScope(r)
	if err != nil {
		return err
	}
	req, err := a.parseExport(r)
	if err != nil {
		return err
	}
	name := exportName(r.URL.Query(), a.DB.Now().In(a.Location), req.format)
	if req.format == store.FormatCSV {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	} else {
		// Shown in place when opened, saved under its name when downloaded.
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Disposition", `inline; filename="`+name+`"`)
	}
	sw := &startedWriter{w: w}
	var out io.Writer = sw
	if req.bom {
		out = store.WithBOM(sw)
	}
	_, err = a.DB.ExportLogs(r.Context(), out, store.And(req.where, scope), req.format, req.includeOutput)
	if err == nil {
		return nil
	}
	if !sw.started {
		w.Header().Del("Content-Disposition")
		return err
	}
	// The status line is gone: all that is left is to stop and say so in the log, as an
	// error only when the client is still there.
	level := slog.LevelError
	if web.ClientGone(r) {
		level = slog.LevelInfo
	}
	a.Logger.LogAttrs(r.Context(), level, "export stopped mid-stream",
		slog.String("request_id", web.RequestID(r)), slog.Any("err", err), slog.Bool("client_gone", web.ClientGone(r)))
	return nil
}

// exportNameParts name an export's filters in its file name, in this order; other
// filters follow by their own name.
var exportNameParts = []struct{ key, label string }{
	{"device_id", "device"}, {"device", "device"}, {"command_id", "command"}, {"command", "command"},
	{"username", "user"}, {"user_id", "user"}, {"success", ""}, {"source", "from"}, {"q", "search"},
	{"start_date", "from"}, {"end_date", "to"}, {"created__gte", "since"}, {"created__lte", "until"},
}

// exportName is the file name of an export: what it holds and when it was made, so
// that two files of a day never share a name: "command-log-42.csv" for one log,
// "command-logs_device-3_failed_since-2026-03-01_2026-03-12-090000.csv" for a list.
func exportName(vals url.Values, now time.Time, format string) string {
	ext := "." + format
	if ids := vals["id"]; len(ids) == 1 && len(vals) == len(exportOwnParams(vals))+1 {
		return "command-log-" + fileWord(ids[0]) + ext
	}
	var parts []string
	seen := map[string]bool{"id": false}
	add := func(key, label string) {
		seen[key] = true
		for _, v := range vals[key] {
			switch {
			case key == "success" && (v == "true" || v == "1"):
				parts = append(parts, "successful")
			case key == "success":
				parts = append(parts, "failed")
			case strings.HasPrefix(key, "created__"):
				if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
					v = t.In(now.Location()).Format("2006-01-02-150405")
				}
				parts = append(parts, label+"-"+fileWord(v))
			default:
				parts = append(parts, label+"-"+fileWord(v))
			}
		}
	}
	for _, p := range exportNameParts {
		add(p.key, p.label)
	}
	for _, key := range slices.Sorted(maps.Keys(vals)) {
		if !seen[key] && !exportParams[key] {
			add(key, fileWord(key))
		}
	}
	name := strings.Join(append([]string{"command-logs"}, parts...), "_")
	if len(name) > 160 {
		name = strings.TrimRight(name[:160], "_-.")
	}
	return name + "_" + now.Format("2006-01-02-150405") + ext
}

// exportOwnParams are the export's own parameters among vals (format, include_output…).
func exportOwnParams(vals url.Values) []string {
	var own []string
	for k := range vals {
		if exportParams[k] && k != "q" && k != "start_date" && k != "end_date" {
			own = append(own, k)
		}
	}
	return own
}

// fileWord is a value as a file name may hold it: letters, digits, dots and dashes,
// every other run of characters a dash, at most 40 characters.
func fileWord(v string) string {
	var b strings.Builder
	dash := false
	for _, r := range v {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	out := strings.Trim(b.String(), "-.")
	if out == "" {
		return "x"
	}
	return out
}

// startedWriter remembers whether any byte of the body was written.
type startedWriter struct {
	w       io.Writer
	started bool
}

func (s *startedWriter) Write(p []byte) (int, error) {
	s.started = s.started || len(p) > 0
	return s.w.Write(p)
}
