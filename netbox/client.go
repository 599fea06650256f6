// Package netbox syncs FieldKit's inventory from a central NetBox: it reads the NetBox
// REST API (as a client: package handlers serves it), stages what it fetches in the
// store so that an interrupted sync resumes, and applies it in one transaction. It
// knows the store and NetBox's JSON, nothing of FieldKit's own HTTP API.
package netbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"fieldkit/web"
)

// maxPageBytes bounds one page of a NetBox list: 1,000 devices with their custom
// fields fit many times over.
const maxPageBytes = 64 << 20

// Client reads one NetBox's REST API with a token.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// NewClient is a client of the NetBox at baseURL ("https://netbox.example.com"; a path
// prefix is kept), trusting the PEM certificates of caFile besides the system's when
// it is set.
func NewClient(baseURL, token, caFile string) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(baseURL), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("netbox: %q is not an http(s) URL", baseURL)
	}
	tr, err := web.ClientTransport(caFile)
	if err != nil {
		return nil, fmt.Errorf("netbox: %w", err)
	}
	return &Client{base: u, token: token, http: &http.Client{Transport: tr, Timeout: 2 * time.Minute}}, nil
}

// page is one page of a NetBox list.
type page struct {
	Count   int               `json:"count"`
	Next    *string           `json:"next"`
	Results []json.RawMessage `json:"results"`
}

// endpoint is the absolute URL of an API path with a query.
func (c *Client) endpoint(path string, q url.Values) string {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = q.Encode()
	return u.String()
}

// nextURL is where a page's "next" points, on this client's base: NetBox behind a
// proxy often writes its own idea of its scheme and host there.
func (c *Client) nextURL(next string) (string, error) {
	n, err := url.Parse(next)
	if err != nil {
		return "", fmt.Errorf("netbox: a page's next %q is not a URL", next)
	}
	u := *c.base
	u.Path, u.RawQuery = n.Path, n.RawQuery
	return u.String(), nil
}

// get fetches one page.
func (c *Client) get(ctx context.Context, rawURL string) (page, error) {
	var p page
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return p, fmt.Errorf("netbox: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", authHeader(c.token))
	res, err := c.http.Do(req)
	if err != nil {
		return p, fmt.Errorf("netbox: GET %s: %w", show(rawURL), unwrapURLError(err))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxPageBytes+1))
	if err != nil {
		return p, fmt.Errorf("netbox: GET %s: %w", show(rawURL), err)
	}
	if res.StatusCode != http.StatusOK {
		return p, fmt.Errorf("netbox: GET %s: %s%s", show(rawURL), res.Status, detail(body))
	}
	if len(body) > maxPageBytes {
		return p, fmt.Errorf("netbox: GET %s: a page over %d MiB", show(rawURL), maxPageBytes>>20)
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Results == nil {
		return p, fmt.Errorf("netbox: GET %s: not a NetBox list (count, next, results): is this a NetBox API?", show(rawURL))
	}
	return p, nil
}

// authHeader is the Authorization header of a token: NetBox's v2 tokens (nbt_…) are
// sent as Bearer, the 40-character ones as Token.
func authHeader(token string) string {
	if strings.HasPrefix(token, "nbt_") {
		return "Bearer " + token
	}
	return "Token " + token
}

// show is a URL as messages show it: path and query (the host is the configured one).
func show(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.RequestURI()
	}
	return rawURL
}

// unwrapURLError drops net/url's repetition of the method and URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// detail is NetBox's explanation of a refusal ({"detail": "Invalid token"}), if any.
func detail(body []byte) string {
	var d struct {
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &d) == nil && d.Detail != "" {
		return ": " + d.Detail
	}
	return ""
}
