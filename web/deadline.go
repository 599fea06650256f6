package web

import (
	"net/http"
	"time"
)

// BodyTimeout is how long a client may take to send a request body (at most MaxBody).
// Without it a client that trickles a body holds a connection and a goroutine for as
// long as it likes, authenticated or not: the server reads what a handler left unread
// before it answers.
const BodyTimeout = 20 * time.Second

// LimitBodyTime gives a request that carries a body d to send all of it, by a read
// deadline on its connection. net/http lifts the deadline once the body has been read
// to its end (it starts watching the idle connection then), so a request may go on to
// run as long as its work needs — an execution, up to its own timeout — without its
// connection or context timing out underneath it. A body no handler reads keeps the
// deadline: the server's read of the rest after the handler is bounded too.
func LimitBodyTime(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if r.Body == nil || r.Body == http.NoBody || d <= 0 {
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d)) // a recorder has no connection: nothing to bound
}
