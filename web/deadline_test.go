package web

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A body read in time lifts the deadline: the handler may then take longer than it,
// its request's context alive; a body sent too slowly is cut at the deadline.
func TestLimitBodyTime(t *testing.T) {
	const d = 100 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		LimitBodyTime(w, r, d)
		_, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusRequestTimeout)
			return
		}
		time.Sleep(3 * d)
		fmt.Fprint(w, r.Context().Err())
	}))
	defer srv.Close()
	res, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"a": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "<nil>" {
		t.Errorf("a handler running past the deadline after reading its body: %d %q", res.StatusCode, body)
	}

	pr, pw := io.Pipe()
	go func() {
		for range 20 {
			if _, err := pw.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(d / 2)
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", srv.URL, pr)
	req.ContentLength = 20
	res, err = http.DefaultClient.Do(req)
	if err == nil {
		res.Body.Close()
		if res.StatusCode != http.StatusRequestTimeout {
			t.Errorf("a body trickled over 10 deadlines: %d", res.StatusCode)
		}
	}
	pr.Close()
}
