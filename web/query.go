package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// CheckQuery refuses a query string the server would read differently from the
// client: a raw ";" (net/url drops the whole pair holding one, so "device_id=2;3"
// would silently lose its filter) or a malformed %-escape. The 400 names the parameter.
func CheckQuery(r *http.Request) error {
	fe := FieldErrors{}
	for part := range strings.SplitSeq(r.URL.RawQuery, "&") {
		if part == "" {
			continue
		}
		rawKey, rawVal, _ := strings.Cut(part, "=")
		key, errKey := url.QueryUnescape(rawKey)
		if errKey != nil || strings.Contains(rawKey, ";") {
			key = strings.SplitN(rawKey, ";", 2)[0]
			if k, err := url.QueryUnescape(key); err == nil {
				key = k
			}
		}
		if key == "" {
			key = "non_field_errors"
		}
		_, errVal := url.QueryUnescape(rawVal)
		switch {
		case strings.Contains(part, ";"):
			fe.Add(key, `A raw ";" is not allowed in a query string; encode it as %3B.`)
		case errKey != nil || errVal != nil:
			fe.Add(key, "Malformed %-escape in the query string.")
		}
	}
	return fe.Err()
}

// ParseID reads an object id as a path or query carries it: a positive decimal integer
// without a sign, spaces or leading zeros, so that "+1" and "01" never name object 1.
func ParseID(s string) (int64, bool) {
	if s == "" || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// ParseCount reads a non-negative decimal integer (a limit or offset) in its canonical
// form: no sign, spaces or leading zeros.
func ParseCount(s string) (int, bool) {
	if s == "0" {
		return 0, true
	}
	n, ok := ParseID(s)
	if !ok || n > 1<<53 {
		return 0, false
	}
	return int(n), true
}
