package events

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"fieldkit/store"
)

// SecretPurpose binds a webhook's sealed secret (store.Keyring.SealText).
const SecretPurpose = "extras.webhook:secret"

// Sign is X-Hook-Signature: the hex HMAC-SHA512 of the body with the secret, as NetBox
// signs it.
func Sign(body []byte, secret string) string {
	m := hmac.New(sha512.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// sendLoop sends each webhook's oldest pending delivery when it is due, one request per
// webhook at a time and at most Workers at once, and waits for the next due one.
func (p *Processor) sendLoop(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for ctx.Err() == nil {
		wait := p.sendDue(ctx, &wg)
		select {
		case <-ctx.Done():
		case <-p.send:
		case <-time.After(wait):
		}
	}
}

// claimMargin is how long past its request's timeout a claimed delivery stays this
// process's: its try's record comes in that time unless the process stopped.
const claimMargin = time.Minute

// sendDue starts the due deliveries of webhooks with no request under way, and returns
// how long until the next one is due.
func (p *Processor) sendDue(ctx context.Context, wg *sync.WaitGroup) time.Duration {
	cfg := p.config()
	// The read of the heads and the marks of the webhooks under way are one step under
	// sendMu, as a finished try's record and the clearing of its mark are: a head read
	// before its try was recorded is always seen under way, never sent twice.
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	ds, err := p.o.DB.DueDeliveries(ctx)
	if err != nil {
		if ctx.Err() == nil {
			p.o.Logger.Error("webhook deliveries not read", "err", err)
		}
		return 5 * time.Second
	}
	now := p.o.Now()
	wait := 30 * time.Second
	for _, d := range ds {
		if d.NextAttempt.After(now) {
			wait = min(wait, d.NextAttempt.Sub(now))
			continue
		}
		if p.inflight[d.WebhookID] || len(p.inflight) >= cfg.Workers {
			continue
		}
		// Another process on the same database (a second hub) may send it: the claim
		// makes the try this process's, until the request's timeout has long passed.
		if ok, err := p.o.DB.ClaimDelivery(ctx, d, now, now.Add(cfg.Timeout+claimMargin)); !ok {
			if err != nil && ctx.Err() == nil {
				p.o.Logger.Error("webhook delivery not claimed", "delivery_id", d.ID, "err", err)
			}
			continue
		}
		p.inflight[d.WebhookID] = true
		wg.Add(1)
		go func(d store.Delivery) {
			defer wg.Done()
			ctx := context.WithoutCancel(ctx)
			rec, ok := p.deliver(ctx, d, cfg)
			p.sendMu.Lock()
			if ok {
				if err := p.o.DB.RecordAttempt(ctx, d.ID, rec); err != nil {
					p.o.Logger.Error("webhook delivery not recorded", "delivery_id", d.ID, "err", err)
				}
			}
			delete(p.inflight, d.WebhookID)
			p.sendMu.Unlock()
			nudge(p.send) // the webhook's next delivery, or another webhook's turn
		}(d)
	}
	return max(wait, 10*time.Millisecond)
}

// deliver makes one try at a delivery and says how to record it (false: nothing to
// record, the webhook is gone with its deliveries).
func (p *Processor) deliver(ctx context.Context, d store.Delivery, cfg Config) (store.Attempt, bool) {
	w, err := p.o.DB.WebhookTarget(ctx, d.WebhookID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Attempt{}, false
	}
	a := Attempt{}
	if err == nil {
		a = p.try(ctx, w, d, cfg)
	} else {
		a.Error = err.Error()
	}
	now := p.o.Now()
	status := a.outcome(d, now, cfg)
	switch {
	case status.Status == "delivered":
		p.o.Logger.Info("webhook delivered", "webhook", w.Name, "webhook_id", w.ID, "delivery_id", d.ID, "status", a.HTTPStatus)
	case status.Status == "failed":
		p.o.Logger.Error("webhook delivery given up", "webhook", w.Name, "webhook_id", w.ID, "delivery_id", d.ID,
			"attempts", d.Attempts+1, "err", a.Error)
	case d.Attempts == 0:
		p.o.Logger.Warn("webhook delivery failed; it is retried", "webhook", w.Name, "webhook_id", w.ID, "delivery_id", d.ID,
			"next_attempt", status.Next, "err", a.Error)
	}
	obs := status.Status
	if obs == "pending" {
		obs = "retry"
	}
	p.o.Observer.Delivery(obs, now.Sub(d.Created))
	return status, true
}

// Attempt is one request's result.
type Attempt struct {
	HTTPStatus int
	Body       string
	Error      string
	Permanent  bool // it cannot succeed by trying again (a template that does not render)
}

// outcome is the attempt as recorded: delivered, retried after a backoff, or given up.
func (a Attempt) outcome(d store.Delivery, now time.Time, cfg Config) store.Attempt {
	rec := store.Attempt{HTTPStatus: a.HTTPStatus, ResponseBody: a.Body, Error: a.Error}
	switch {
	case a.Error == "" && a.HTTPStatus >= 200 && a.HTTPStatus < 300:
		rec.Status = "delivered"
	case a.Permanent || now.Sub(d.Created) >= cfg.GiveUpAfter:
		rec.Status = "failed"
	default:
		rec.Status, rec.Next = "pending", now.Add(backoff(d.Attempts+1, cfg))
	}
	return rec
}

// backoff is the delay before try n+1: RetryMin doubled at each failure, at most RetryMax.
func backoff(n int, cfg Config) time.Duration {
	d := cfg.RetryMin
	for i := 1; i < n && d < cfg.RetryMax; i++ {
		d *= 2
	}
	return min(d, cfg.RetryMax)
}

// try renders and sends the request.
func (p *Processor) try(ctx context.Context, w store.WebhookTarget, d store.Delivery, cfg Config) Attempt {
	var c map[string]any
	if err := json.Unmarshal(d.Context, &c); err != nil {
		return Attempt{Error: "the event's context does not read: " + err.Error(), Permanent: true}
	}
	req, body, err := p.request(ctx, w, d, c)
	if err != nil {
		return Attempt{Error: err.Error(), Permanent: true}
	}
	secret, err := p.o.Keyring.OpenText(SecretPurpose, w.SealedSecret)
	if err != nil {
		return Attempt{Error: "the webhook's secret does not decrypt with this server's master key", Permanent: true}
	}
	if secret != "" {
		req.Header.Set("X-Hook-Signature", Sign(body, secret))
	}
	client, err := p.client(w, cfg)
	if err != nil {
		return Attempt{Error: err.Error()}
	}
	res, err := client.Do(req)
	if err != nil {
		return Attempt{Error: err.Error()}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 1000))
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // so the connection is reused
	a := Attempt{HTTPStatus: res.StatusCode, Body: strings.ToValidUTF8(string(raw), "�")}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		a.Error = fmt.Sprintf("the receiver answered %s", res.Status)
	}
	return a
}

// request renders a delivery's URL, headers and body.
func (p *Processor) request(ctx context.Context, w store.WebhookTarget, d store.Delivery, c map[string]any) (*http.Request, []byte, error) {
	render := func(what, src string) (string, error) {
		t, err := ParseTemplate(src)
		if err != nil {
			return "", fmt.Errorf("the webhook's %s: %v", what, err)
		}
		return t.Render(c)
	}
	url, err := render("URL", w.URL)
	if err != nil {
		return nil, nil, err
	}
	var body []byte
	if strings.TrimSpace(w.BodyTemplate) == "" {
		body = d.Context
	} else {
		s, err := render("body template", w.BodyTemplate)
		if err != nil {
			return nil, nil, err
		}
		body = []byte(s)
	}
	headers, err := render("additional headers", w.Headers)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, w.Method, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("the request cannot be made: %v", err)
	}
	req.Header.Set("Content-Type", w.ContentType)
	req.Header.Set("User-Agent", "FieldKit/"+p.o.Version)
	for name, value := range ParseHeaders(headers) {
		req.Header.Set(name, value)
	}
	return req, body, nil
}

// ParseHeaders reads "Name: Value" lines (blank lines skipped).
func ParseHeaders(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && strings.TrimSpace(name) != "" {
			out[strings.TrimSpace(name)] = strings.TrimSpace(value)
		}
	}
	return out
}

// CheckHeaders returns why additional_headers cannot be used, or "".
func CheckHeaders(s string) string {
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, _, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) == "" || strings.ContainsAny(strings.TrimSpace(name), " \t") {
			return fmt.Sprintf("Line %d is not a header: write Name: Value, one a line.", i+1)
		}
	}
	return ""
}

type httpClient = http.Client

// client is the HTTP client of a webhook's TLS settings (kept per settings).
func (p *Processor) client(w store.WebhookTarget, cfg Config) (*http.Client, error) {
	key := fmt.Sprint(w.SSLVerification, "\x00", w.CAFile)
	p.mu.Lock()
	c := p.clients[key]
	p.mu.Unlock()
	if c != nil {
		return c, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: !w.SSLVerification} //nolint:gosec // the webhook's owner asked for it
	if w.CAFile != "" {
		pem, err := os.ReadFile(w.CAFile)
		if err != nil {
			return nil, fmt.Errorf("the webhook's CA file: %v", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the webhook's CA file %s holds no PEM certificate", w.CAFile)
		}
		tc.RootCAs = pool
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	c = &http.Client{Timeout: cfg.Timeout, Transport: tr}
	p.mu.Lock()
	p.clients[key] = c
	p.mu.Unlock()
	return c, nil
}
