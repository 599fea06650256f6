package web

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"fieldkit/observe"
)

// Router collects the routes of the API and the web interface and builds the one
// httprouter that serves them. It records every route (Routes: the route table the
// schema and the section indexes read), names each for the access log and the metrics,
// adapts the one handler shape, and lifts one limit of httprouter v1.3.0: a static
// segment may sit beside a parameter at the same position for the same method
// (command-logs/export/ beside command-logs/:id/), which httprouter refuses. The
// parameter's route is registered and hands such a name on to its route.
type Router struct {
	Log *slog.Logger
	// BodyTimeout is how long a client may take to send a request body; 0 =
	// BodyTimeout (see LimitBodyTime).
	BodyTimeout time.Duration
	routes      []route
	fallbacks   []fallback
}

// Route is one (method, path) the router answers, in httprouter's syntax.
type Route struct{ Method, Path string }

type route struct {
	Route
	h http.Handler
}

type fallback struct {
	prefix string
	h      http.Handler
}

// Handle routes method and path to h.
func (rt *Router) Handle(method, path string, h HandlerFunc) {
	rt.HandleHTTP(method, path, rt.adapt(h))
}

// HandleHTTP routes method and path to a plain http.Handler (a redirect).
func (rt *Router) HandleHTTP(method, path string, h http.Handler) {
	rt.routes = append(rt.routes, route{Route{method, path}, observe.Route(path, h)})
}

// Fallback answers the GET and HEAD requests under prefix that no route matches (the
// web interface's pages, which route on the client), named pattern in the access log.
func (rt *Router) Fallback(prefix, pattern string, h HandlerFunc) {
	rt.fallbacks = append(rt.fallbacks, fallback{prefix, observe.Route(pattern, rt.adapt(h))})
}

// Routes is the route table, in the order routes were added.
func (rt *Router) Routes() []Route {
	out := make([]Route, len(rt.routes))
	for i, r := range rt.routes {
		out[i] = r.Route
	}
	return out
}

// Routed reports whether method and path are a route.
func (rt *Router) Routed(method, path string) bool {
	return slices.ContainsFunc(rt.routes, func(r route) bool { return r.Method == method && r.Path == path })
}

// adapt turns the handler shape into an http.Handler: an error is answered by Respond.
func (rt *Router) adapt(h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			Respond(w, r, rt.Log, err)
		}
	})
}

// Handler builds the httprouter serving every route: a request body has BodyTimeout to
// arrive (LimitBodyTime), a query string the server would read differently from the
// client is a 400 (CheckQuery), a trailing slash is
// redirected, another method on a path is a 405 and an unknown path a 404 (or a
// fallback's), in the API's JSON; a panic is logged with its stack and answered with a
// 500.
func (rt *Router) Handler() http.Handler {
	hr := rt.build()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := rt.BodyTimeout
		if d == 0 {
			d = BodyTimeout
		}
		LimitBodyTime(w, r, d)
		if err := CheckQuery(r); err != nil {
			Respond(w, r, rt.Log, err)
			return
		}
		hr.ServeHTTP(w, r)
	})
}

func (rt *Router) build() *httprouter.Router {
	hr := httprouter.New()
	hr.RedirectTrailingSlash = true
	hr.RedirectFixedPath = false
	hr.HandleMethodNotAllowed = true
	hr.NotFound = rt.adapt(rt.notFound)
	hr.MethodNotAllowed = rt.adapt(func(http.ResponseWriter, *http.Request) error { return MethodNotAllowed() })
	hr.PanicHandler = rt.recovered
	hosts := map[Route]*host{}
	var direct []route
	for _, r := range rt.routes {
		if at, param, name, ok := rt.beside(r.Route); ok {
			h := hosts[at]
			if h == nil {
				h = &host{param: param, names: map[string]http.Handler{}}
				hosts[at] = h
			}
			h.names[name] = r.h
			continue
		}
		direct = append(direct, r)
	}
	for _, r := range direct {
		if h := hosts[r.Route]; h != nil {
			h.own = r.h
			continue
		}
		hr.Handler(r.Method, r.Path, r.h)
	}
	for at, h := range hosts {
		if h.own == nil {
			h.own = hr.NotFound
			if rt.pathRouted(at.Path) {
				h.own = hr.MethodNotAllowed
			}
		}
		hr.Handler(at.Method, at.Path, h)
	}
	return hr
}

// beside finds the route a static segment of r sits beside: another route of the same
// method with a parameter at that position and the same segments before it. at is
// where r is then served from: r's path with that segment made the parameter.
func (rt *Router) beside(r Route) (at Route, param, name string, ok bool) {
	segs := strings.Split(r.Path, "/")
	for _, q := range rt.routes {
		if q.Method != r.Method || q.Path == r.Path {
			continue
		}
		qs := strings.Split(q.Path, "/")
		for i := 0; i < len(segs) && i < len(qs); i++ {
			if segs[i] == qs[i] {
				continue
			}
			// An empty segment (a path ending in /) is the node itself, which httprouter
			// allows beside a parameter.
			if strings.HasPrefix(qs[i], ":") && segs[i] != "" && !strings.ContainsAny(segs[i][:1], ":*") {
				path := strings.Join(append(append(slices.Clone(segs[:i]), qs[i]), segs[i+1:]...), "/")
				return Route{r.Method, path}, qs[i][1:], segs[i], true
			}
			break
		}
	}
	return Route{}, "", "", false
}

func (rt *Router) pathRouted(path string) bool {
	return slices.ContainsFunc(rt.routes, func(r route) bool { return r.Path == path })
}

// host serves a parameter's route and the static names beside it.
type host struct {
	param string
	names map[string]http.Handler
	own   http.Handler
}

func (h *host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if named, ok := h.names[httprouter.ParamsFromContext(r.Context()).ByName(h.param)]; ok {
		named.ServeHTTP(w, r)
		return
	}
	h.own.ServeHTTP(w, r)
}

func (rt *Router) notFound(w http.ResponseWriter, r *http.Request) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		for _, f := range rt.fallbacks {
			if strings.HasPrefix(r.URL.Path, f.prefix) {
				f.h.ServeHTTP(w, r)
				return nil
			}
		}
	}
	return NotFound()
}

func (rt *Router) recovered(w http.ResponseWriter, r *http.Request, v any) {
	rt.Log.Error("panic serving request", "request_id", RequestID(r), "path", r.URL.Path,
		"panic", v, "stack", string(debug.Stack()))
	Write(w, http.StatusInternalServerError, internal(RequestID(r)).Body)
}

// Param is a path parameter of the route that matched (":id" is "id").
func Param(r *http.Request, name string) string {
	return httprouter.ParamsFromContext(r.Context()).ByName(name)
}
