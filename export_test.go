package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

// trickyErrors are error messages a CSV must carry exactly: separators, quotes, line
// breaks inside a cell (LF, CRLF, CR), non-ASCII text.
var trickyErrors = []string{
	"plain",
	`comma, "quotes" and ; semicolon`,
	"two\nlines",
	"windows\r\nline",
	"lone\rreturn",
	"Zürich – 東京 ✓",
}

func seedTricky(t *testing.T, data string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	var logs []store.Values
	for i, msg := range trickyErrors {
		logs = append(logs, store.Values{"command_name": "show version", "command_type": "show", "device_name": "sw-é",
			"username": "alice", "error_message": msg, "execution_time": at.Add(time.Duration(i) * time.Second), "created": at.Add(time.Duration(i) * time.Second)})
	}
	if err := db.InsertLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
}

// TestCSVExportForSpreadsheets: records end with CRLF, --bom (or export.bom) starts the
// file with a UTF-8 BOM, and Python's csv module reads every cell back exactly.
func TestCSVExportForSpreadsheets(t *testing.T) {
	data := t.TempDir()
	seedTricky(t, data)
	env := map[string]string{"FIELDKIT_DATA": data}
	plain := filepath.Join(t.TempDir(), "plain.csv")
	if _, _, err := cli(t, env, "", "export", "logs", "--output", plain); err != nil {
		t.Fatal(err)
	}
	withBOM := filepath.Join(t.TempDir(), "bom.csv")
	env["FIELDKIT_EXPORT_BOM"] = "true" // the setting; the flag overrides it below
	if _, _, err := cli(t, env, "", "export", "logs", "--output", withBOM); err != nil {
		t.Fatal(err)
	}
	noBOM := filepath.Join(t.TempDir(), "nobom.csv")
	if _, _, err := cli(t, env, "", "export", "logs", "--bom=false", "--output", noBOM); err != nil {
		t.Fatal(err)
	}
	p, _ := os.ReadFile(plain)
	b, _ := os.ReadFile(withBOM)
	n, _ := os.ReadFile(noBOM)
	if bytes.HasPrefix(p, []byte(store.BOM)) || !bytes.Equal(b, append([]byte(store.BOM), p...)) || !bytes.Equal(n, p) {
		t.Fatalf("BOM: plain %q…, bom %q…, --bom=false %q…", p[:8], b[:8], n[:8])
	}
	header, _, _ := bytes.Cut(p, []byte("\n"))
	if !bytes.HasSuffix(header, []byte("\r")) || !bytes.HasSuffix(p, []byte("\r\n")) {
		t.Fatalf("records must end with CRLF: header %q, end %q", header, p[len(p)-4:])
	}
	if !bytes.Contains(p, []byte("\"two\nlines\"")) {
		t.Fatalf("a line break inside a cell must stay LF:\n%q", p)
	}
	python := os.Getenv("FIELDKIT_TEST_PYTHON")
	if python == "" {
		python, _ = exec.LookPath("python3")
	}
	if python == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no python3 to read the CSV back")
		}
		t.Skip("no python3 to read the CSV back")
	}
	for _, file := range []string{plain, withBOM} {
		script := `import csv, json, sys
with open(sys.argv[1], newline="", encoding="utf-8-sig") as f:
    print(json.dumps([r[10] for r in csv.reader(f)][1:]))`
		out, err := exec.Command(python, "-c", script, file).CombinedOutput()
		if err != nil {
			t.Fatalf("python: %v\n%s", err, out)
		}
		var got []string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if strings.Join(got, "|") != strings.Join(trickyErrors, "|") || len(got) != len(trickyErrors) {
			t.Fatalf("%s: python read back\n%q\nwant\n%q", filepath.Base(file), got, trickyErrors)
		}
	}
}

// TestPeriodicExportBOM: export.bom applies to the scheduled export files too.
func TestPeriodicExportBOM(t *testing.T) {
	data := t.TempDir()
	seedTricky(t, data)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg, err := loadConfig("", func(string) string { return "" }, []string{"FIELDKIT_EXPORT_BOM=true", "FIELDKIT_EXPORT_SCHEDULE=daily 00:00"},
		map[string]string{"server.data": data})
	if err != nil {
		t.Fatal(err)
	}
	ex := newExporter(cfg, db, time.UTC, slog.New(slog.DiscardHandler))
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	file, rows, err := ex.ExportPeriod(ctx, store.Period{Name: "2026-03-02", From: day, To: day.AddDate(0, 0, 1)})
	if err != nil || rows != len(trickyErrors) {
		t.Fatalf("export: %d rows, %v", rows, err)
	}
	b, _ := os.ReadFile(file)
	if !bytes.HasPrefix(b, []byte(store.BOM+"id,created")) || !bytes.HasSuffix(b, []byte("\r\n")) {
		t.Fatalf("periodic export: %q…", b[:20])
	}
}

// TestExportDurationsToTheMillisecond: a duration a float cannot hold exactly (0.1+0.2,
// as the demo's history had) or held to the nanosecond is exported to the millisecond,
// the precision of execute's execution_time, in CSV and JSON alike.
func TestExportDurationsToTheMillisecond(t *testing.T) {
	data := initData(t, t.TempDir())
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	var logs []store.Values
	for i, d := range []float64{0.1 + 0.2, 1.2345678912, 2} {
		logs = append(logs, store.Values{"command_name": "show version", "command_type": "show", "device_name": "sw1",
			"username": "alice", "success": true, "execution_duration": d, "created": at.Add(time.Duration(i) * time.Second)})
	}
	if err := db.InsertLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	db.Close()
	env := map[string]string{"FIELDKIT_DATA": data}
	csv, _, err := cli(t, env, "", "export", "logs", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	js, _, err := cli(t, env, "", "export", "logs", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{",0.3,", ",1.235,", ",2,"} {
		if !strings.Contains(csv, want) {
			t.Errorf("the CSV lacks %q:\n%s", want, csv)
		}
	}
	for _, want := range []string{`"execution_duration":0.3`, `"execution_duration":1.235`, `"execution_duration":2`} {
		if !strings.Contains(strings.ReplaceAll(js, " ", ""), want) {
			t.Errorf("the JSON lacks %q:\n%s", want, js)
		}
	}
	if strings.Contains(csv+js, "0000000") || strings.Contains(csv+js, "2345678") {
		t.Errorf("a float's own digits were exported:\n%s\n%s", csv, js)
	}
}
