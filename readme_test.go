//go:build !windows

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fieldkit/web/webtest"
)

// TestReadmeListsEverySetting: the README's settings table has a row for every key,
// with its environment variable, and marks the reloadable ones.
func TestReadmeListsEverySetting(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	c := defaults()
	for _, s := range settings(&c) {
		reload := ` +`
		if s.reload {
			reload = ` yes +`
		}
		row := regexp.MustCompile(`(?m)^\| ` + "`" + regexp.QuoteMeta(s.name()) + "` \\| `" + regexp.QuoteMeta(s.env()) +
			"` \\| [^|]+ \\|" + reload + `\|`)
		if !row.Match(readme) {
			t.Errorf("README lacks the row of %s (%s, SIGHUP column %q)", s.name(), s.env(), reload)
		}
	}
}

// readmeExamples are the YAML configuration examples of the README.
func readmeExamples(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(readme, -1) {
		out = append(out, string(m[1]))
	}
	if len(out) == 0 {
		t.Fatal("no yaml example in the README")
	}
	return out
}

// runnable rewrites an example to run here: the listen address and TLS files are
// replaced (by a free port and a generated pair; a CA file by the certificate),
// everything else is kept.
func runnable(t *testing.T, example, dir, pathPrefix string) (yaml string, tlsOn bool) {
	t.Helper()
	cert, key := selfSigned(t, dir)
	lines := strings.Split(example, "\n")
	for i, ln := range lines {
		k, _, ok := strings.Cut(strings.TrimSpace(ln), ":")
		if !ok {
			continue
		}
		indent := ln[:len(ln)-len(strings.TrimLeft(ln, " "))]
		switch k {
		case "tls_cert":
			lines[i], tlsOn = indent+"tls_cert: "+pathPrefix+cert, true
		case "tls_key":
			lines[i] = indent + "tls_key: " + pathPrefix + key
		case "ca_file":
			lines[i] = indent + "ca_file: " + pathPrefix + cert // a certificate file that exists
		case "listen":
			lines[i] = indent + "# listen: given by --listen"
		}
	}
	return strings.Join(lines, "\n"), tlsOn
}

// TestReadmeExamplesStart starts the Linux binary with each configuration example of
// the README and waits for the API to answer.
func TestReadmeExamplesStart(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes: not in -short")
	}
	for i, ex := range readmeExamples(t) {
		dir := t.TempDir()
		yaml, tlsOn := runnable(t, ex, dir, "")
		conf := filepath.Join(dir, "fieldkit.yaml")
		os.WriteFile(conf, []byte(yaml), 0o600)
		addr := freeAddr(t)
		cmd := exec.Command(testBinary(t), "serve", "--config", conf, "--data", filepath.Join(dir, "data"), "--listen", addr)
		cmd.Env = serverEnv()
		checkStarts(t, i, cmd, addr, tlsOn, nil)
	}
}

// TestWindowsBuildTimeZones runs the Windows build under Wine with each README
// example (Europe/Paris among them). Wine is a place where the binary can find no
// zoneinfo of its own: Windows has none, -trimpath leaves no GOROOT to fall back on,
// and GOROOT and ZONEINFO are removed from the environment. A build without the
// embedded database must fail there with "unknown time zone": that control run proves
// the method, the real build starting proves the claim.
func TestWindowsBuildTimeZones(t *testing.T) {
	if testing.Short() {
		t.Skip("Wine: not in -short")
	}
	wine, prefix := winePrefix(t)
	dir := t.TempDir()
	build := func(name string, tags ...string) string {
		exe := filepath.Join(dir, name)
		args := append([]string{"build", "-trimpath", "-o", exe}, tags...)
		cmd := exec.Command("go", append(args, ".")...)
		cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		return exe
	}
	exe := build("fieldkit.exe")
	control := build("fieldkit-no-tzdata.exe", "-tags", "fieldkit_no_tzdata")
	wineEnv := func() []string {
		var env []string
		for _, kv := range serverEnv() {
			if !strings.HasPrefix(kv, "GOROOT=") && !strings.HasPrefix(kv, "ZONEINFO=") && !strings.HasPrefix(kv, "WINE") {
				env = append(env, kv)
			}
		}
		return append(env, "WINEPREFIX="+prefix, "WINEDEBUG=-all")
	}
	// the control: no embedded database, no zoneinfo to be found
	conf := filepath.Join(dir, "paris.yaml")
	os.WriteFile(conf, []byte("server:\n  time_zone: Europe/Paris\n"), 0o600)
	cmd := exec.Command(wine, control, "serve", "--config", "Z:"+conf, "--data", "Z:"+filepath.Join(dir, "control-data"),
		"--listen", freeAddr(t))
	cmd.Env, cmd.Dir = wineEnv(), filepath.Join(prefix, "drive_c")
	out, err := runWithin(cmd, 60*time.Second)
	if err == nil || !strings.Contains(out, `unknown time zone "Europe/Paris"`) {
		t.Fatalf("the control build found a time zone database after all (the test proves nothing): %v\n%s", err, out)
	}
	for i, ex := range readmeExamples(t) {
		edir := t.TempDir()
		yaml, tlsOn := runnable(t, ex, edir, "Z:")
		conf := filepath.Join(edir, "fieldkit.yaml")
		os.WriteFile(conf, []byte(yaml), 0o600)
		addr := freeAddr(t)
		cmd := exec.Command(wine, exe, "serve", "--config", "Z:"+conf, "--data", "Z:"+filepath.Join(edir, "data"), "--listen", addr)
		cmd.Env, cmd.Dir = wineEnv(), filepath.Join(prefix, "drive_c")
		checkStarts(t, i, cmd, addr, tlsOn, func() {
			k := exec.Command(filepath.Join(filepath.Dir(wine), "wineserver"), "-k")
			k.Env = wineEnv()
			_ = k.Run()
		})
	}
}

// winePrefix finds Wine and prepares a prefix with the bcryptprimitives.dll that Wine 8
// lacks, built from testdata/wine with mingw-w64. In CI both must be there.
func winePrefix(t *testing.T) (wine, prefix string) {
	t.Helper()
	skip := func(msg string) {
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, p := range []string{"/usr/lib/wine/wine64", "/usr/bin/wine64", "/usr/bin/wine"} {
		if _, err := os.Stat(p); err == nil {
			wine = p
			break
		}
	}
	gcc, _ := exec.LookPath("x86_64-w64-mingw32-gcc")
	if wine == "" || gcc == "" {
		skip("needs Debian's wine64 and gcc-mingw-w64-x86-64-win32 (bash .ci/peers.sh install installs them)")
	}
	prefix = os.Getenv("FIELDKIT_TEST_WINEPREFIX")
	if prefix == "" {
		prefix = filepath.Join(os.TempDir(), "fieldkit-wine")
	}
	sys32 := filepath.Join(prefix, "drive_c", "windows", "system32")
	if _, err := os.Stat(sys32); err != nil {
		boot := exec.Command(wine, "wineboot", "--init")
		boot.Env = append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all")
		if out, err := runWithin(boot, 3*time.Minute); err != nil {
			t.Fatalf("wineboot: %v\n%s", err, out)
		}
	}
	dll := filepath.Join(sys32, "bcryptprimitives.dll")
	if _, err := os.Stat(dll); err != nil {
		src, _ := filepath.Abs(filepath.Join("testdata", "wine", "bcryptprimitives.c"))
		if out, err := exec.Command(gcc, "-shared", "-O2", "-o", dll, src, "-ladvapi32").CombinedOutput(); err != nil {
			t.Fatalf("mingw: %v\n%s", err, out)
		}
	}
	return wine, prefix
}

func runWithin(cmd *exec.Cmd, d time.Duration) (string, error) {
	var out webtest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return out.String(), os.ErrDeadlineExceeded
	}
}

// checkStarts starts cmd, waits until its API answers at addr, then stops it.
func checkStarts(t *testing.T, example int, cmd *exec.Cmd, addr string, tlsOn bool, cleanup func()) {
	t.Helper()
	var logs webtest.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-done
		if cleanup != nil {
			cleanup()
		}
	}()
	scheme := "http"
	client := &http.Client{Timeout: 5 * time.Second}
	if tlsOn {
		scheme = "https"
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // the generated test pair
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := client.Get(scheme + "://" + addr + "/api/status/")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("README example %d: the server exited: %v\n%s", example+1, err, logs.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("README example %d: no answer at %s:\n%s", example+1, addr, logs.String())
		}
	}
}

// selfSigned writes a throwaway certificate and key for 127.0.0.1.
func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fieldkit test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(priv)
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}
