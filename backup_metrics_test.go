//go:build !windows

package main

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"testing"
)

// /metrics tells each device's backup age and how many were never backed up: the lab's
// device before and after a config backup through the API.
func TestBackupMetrics(t *testing.T) {
	l := newLab(t, 0)
	s := startServer(t, l, nil)
	scrape := func() string {
		t.Helper()
		res, err := http.Get(s.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return string(body)
	}
	if m := scrape(); !regexp.MustCompile(`(?m)^fieldkit_backups_never 1$`).MatchString(m) ||
		regexp.MustCompile(`fieldkit_backup_age_seconds\{`).MatchString(m) {
		t.Fatalf("before any backup:\n%s", backupLines(m))
	}
	api := apiClient{t: t, base: s.base, token: l.token}
	res := api.do("POST", "/api/plugins/toolkit/config-versions/collect/", map[string]any{"device_ids": []int64{l.deviceID},
		"credential_token": l.credToken}, 200)
	if fmt.Sprint(res["results"].([]any)[0].(map[string]any)["status"]) != "stored" {
		t.Fatalf("collect: %v", res)
	}
	m := scrape()
	if !regexp.MustCompile(`(?m)^fieldkit_backups_never 0$`).MatchString(m) ||
		!regexp.MustCompile(`(?m)^fieldkit_backup_age_seconds\{device="slow-1",site="lab"\} \d`).MatchString(m) ||
		!regexp.MustCompile(`(?m)^fieldkit_backups_stale 0$`).MatchString(m) {
		t.Fatalf("after a backup:\n%s", backupLines(m))
	}
}

// backupLines is the backup metrics' lines of a scrape.
func backupLines(s string) []string {
	return regexp.MustCompile(`(?m)^fieldkit_backup.*$`).FindAllString(s, -1)
}
