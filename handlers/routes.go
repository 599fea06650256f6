package handlers

import (
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"fieldkit/handlers/httpjson"
	"fieldkit/observe"
	"fieldkit/store"
)

// The list paths of every resource; detail paths append "<id>/".
const (
	pathSites       = "/api/dcim/sites/"
	pathPlatforms   = "/api/dcim/platforms/"
	pathDevices     = "/api/dcim/devices/"
	pathInterfaces  = "/api/dcim/interfaces/"
	pathVLANs       = "/api/ipam/vlans/"
	pathIPAddresses = "/api/ipam/ip-addresses/"
	pathTags        = "/api/extras/tags/"
	pathUsers       = "/api/users/users/"
	pathGroups      = "/api/users/groups/"
	pathTokens      = "/api/users/tokens/"
	pathPermissions = "/api/users/permissions/"
	pathCommands    = "/api/plugins/toolkit/commands/"
	pathCommandLogs = "/api/plugins/toolkit/command-logs/"
	pathParse       = "/api/plugins/toolkit/parse/"
)

// readOnlyResources are the NetBox object types FieldKit serves read-only and empty, at
// NetBox's paths (see store/netboxonly.go): NetBox clients list them before the ones
// they need.
var readOnlyResources = []*Resource{
	{Model: store.Regions, Path: "/api/dcim/regions/"},
	{Model: store.SiteGroups, Path: "/api/dcim/site-groups/"},
	{Model: store.Locations, Path: "/api/dcim/locations/"},
	{Model: store.Racks, Path: "/api/dcim/racks/"},
	{Model: store.DeviceRoles, Path: "/api/dcim/device-roles/"},
	{Model: store.Manufacturers, Path: "/api/dcim/manufacturers/"},
	{Model: store.DeviceTypes, Path: "/api/dcim/device-types/"},
	{Model: store.Tenants, Path: "/api/tenancy/tenants/"},
	{Model: store.Clusters, Path: "/api/virtualization/clusters/"},
	{Model: store.VirtualMachines, Path: "/api/virtualization/virtual-machines/"},
	{Model: store.VMInterfaces, Path: "/api/virtualization/interfaces/"},
	{Model: store.Services, Path: "/api/ipam/services/"},
	{Model: store.Prefixes, Path: "/api/ipam/prefixes/"},
}

// The resources: an object type (declared in package store) at a path, with the hooks
// of what its declaration cannot say.
var (
	siteResource       = &Resource{Model: store.Sites, Path: pathSites}
	platformResource   = &Resource{Model: store.Platforms, Path: pathPlatforms, hooks: platformHooks}
	deviceResource     = &Resource{Model: store.Devices, Path: pathDevices}
	interfaceResource  = &Resource{Model: store.Interfaces, Path: pathInterfaces}
	vlanResource       = &Resource{Model: store.VLANs, Path: pathVLANs}
	ipAddressResource  = &Resource{Model: store.IPAddresses, Path: pathIPAddresses, hooks: ipHooks}
	tagResource        = &Resource{Model: store.Tags, Path: pathTags}
	userResource       = &Resource{Model: store.Users, Path: pathUsers, hooks: userHooks}
	groupResource      = &Resource{Model: store.Groups, Path: pathGroups}
	tokenResource      = &Resource{Model: store.Tokens, Path: pathTokens, hooks: tokenHooks}
	permissionResource = &Resource{Model: store.Permissions, Path: pathPermissions, hooks: permissionHooks}
	commandResource    = &Resource{Model: store.Commands, Path: pathCommands, hooks: commandHooks, Cache: true}
	logResource        = &Resource{Model: store.CommandLogs, Path: pathCommandLogs}
)

// routes registers every route of the API. It is the one place to read to know what the
// server answers.
func (a *API) routes(rt *httprouter.Router) {
	a.handle(rt, http.MethodGet, "/api/", a.public(a.index))
	for _, sec := range apiSections {
		a.handle(rt, http.MethodGet, sec, a.public(a.sectionIndex(sec)))
	}
	a.handle(rt, http.MethodGet, "/api/status/", a.public(a.status))

	// Inventory (dcim, ipam, extras).
	a.resource(rt, siteResource)
	a.resource(rt, platformResource)
	a.resource(rt, deviceResource)
	a.handle(rt, http.MethodDelete, pathDevices+":id/host-key/", a.authed(a.clearHostKey))
	a.resource(rt, tagResource)
	a.resource(rt, interfaceResource)
	a.resource(rt, vlanResource)
	a.resource(rt, ipAddressResource)
	for _, res := range readOnlyResources {
		a.resource(rt, res)
	}
	a.handle(rt, http.MethodPost, pathImport, a.authed(a.importFile))

	// Users, groups, tokens, permissions.
	// ROUTES:USERS
	a.resource(rt, userResource)
	a.resource(rt, groupResource)
	tokens := a.declared(tokenResource)
	tokens.create = a.createToken // the key is shown once, in the create's response
	a.crud(rt, tokenResource, tokens)
	a.handle(rt, http.MethodPost, pathProvision, a.public(a.provisionToken))
	a.resource(rt, permissionResource)

	// The toolkit plugin: commands.
	// ROUTES:COMMANDS
	a.resource(rt, commandResource)

	// The toolkit plugin: command logs.
	// ROUTES:LOGS
	// httprouter v1.3.0 panics when a static segment and a parameter share a position for
	// the same method, so command-logs/statistics/ and command-logs/export/ cannot sit
	// beside command-logs/:id/. The detail route dispatches those names; they are
	// recorded as routes of their own for the schema. Logs are read-only: the router
	// answers 405 to any other method on these paths.
	logs := a.declared(logResource)
	logStatic := map[string]handlerFunc{"statistics": a.logStatistics, "export": a.logExport}
	detail := logs.detail
	logs.detail = func(w http.ResponseWriter, r *http.Request) error {
		if h, ok := logStatic[param(r, "id")]; ok {
			observe.SetRoute(r, pathCommandLogs+param(r, "id")+"/")
			return h(w, r)
		}
		return detail(w, r)
	}
	a.crud(rt, logResource, logs)
	for _, name := range []string{"export", "statistics"} {
		a.routeList = append(a.routeList, [2]string{http.MethodGet, pathCommandLogs + name + "/"})
	}

	// Execution (execute, bulk-execute, variable-choices, validate-variables).
	// ROUTES:EXEC
	// httprouter v1.3.0 panics when a static segment and a parameter share a position for
	// the same method: POST commands/bulk-execute/ cannot sit beside POST
	// commands/:id/execute/. One POST commands/:id/ route dispatches "bulk-execute"
	// (no other POST exists there; anything else is a 405). It is recorded as its own
	// route for the schema.
	a.handle(rt, http.MethodPost, pathCommands+":id/execute/", a.authed(a.execute))
	a.handle(rt, http.MethodPost, pathCommands+":id/validate-variables/", a.authed(a.validateVariables))
	a.handle(rt, http.MethodGet, pathCommands+":id/variable-choices/", a.authed(a.variableChoices))
	rt.Handler(http.MethodPost, pathCommands+":id/", a.authed(func(w http.ResponseWriter, r *http.Request) error {
		if param(r, "id") == "bulk-execute" {
			observe.SetRoute(r, pathCommands+"bulk-execute/")
			return a.bulkExecute(w, r)
		}
		return errMethod()
	}))
	a.routeList = append(a.routeList, [2]string{http.MethodPost, pathCommands + "bulk-execute/"})

	// Parsing without a device (template authors, tests).
	a.handle(rt, http.MethodPost, pathParse, a.authed(a.parseOutput))

	// Schema and API readers.
	// ROUTES:SCHEMA
	a.handle(rt, http.MethodGet, "/api/schema/", a.public(a.serveSchema))
	a.handle(rt, http.MethodGet, "/api/docs/", a.public(a.docsPage))
	a.handle(rt, http.MethodGet, "/api/docs/:file", a.public(a.docsAsset))
	a.handle(rt, http.MethodGet, "/api/redoc/", a.public(a.redocPage))
	a.handle(rt, http.MethodGet, "/api/redoc/:file", a.public(a.redocAsset))
}

// crudSet is the handlers of a NetBox-style resource: the single-object ones and the
// bulk ones on the list path (bulkwrite.go); nil ones are not routed.
type crudSet struct {
	list, detail, create, put, patch, del handlerFunc
	bulkPut, bulkPatch, bulkDel           handlerFunc
}

// crudOf builds the standard handlers of a resource from its loader, renderer and writer.
func crudOf[T any](a *API, res *Resource, wr Writer, load Loader[T], id IDOf[T], render Renderer[T]) crudSet {
	c := crudSet{
		list:   listHandler(a, res, load, id, render),
		detail: detailHandler(a, res, load, render),
	}
	if wr.Create != nil {
		c.create = createHandler(a, res, wr, load, id, render)
	}
	if wr.Update != nil {
		c.put = updateHandler(a, res, wr, load, render, false)
		c.patch = updateHandler(a, res, wr, load, render, true)
		c.bulkPut = bulkUpdateHandler(a, res, wr, load, id, render, false)
		c.bulkPatch = bulkUpdateHandler(a, res, wr, load, id, render, true)
	}
	if wr.Delete != nil {
		c.del = deleteHandler(a, res, wr, load)
		c.bulkDel = bulkDeleteHandler(a, res, wr)
	}
	return c
}

// resources lists every Resource routed, for the schema and for the URLs of related
// objects.
var resources []*Resource

// resource routes a resource served wholly from its declaration and hooks.
func (a *API) resource(rt *httprouter.Router, res *Resource) { a.crud(rt, res, a.declared(res)) }

// crud routes a resource at its list path (list, create, and the bulk writes) and its
// detail path; OPTIONS on either describes its fields (metadata.go).
func (a *API) crud(rt *httprouter.Router, res *Resource, c crudSet) {
	registerResource(res)
	for _, h := range []struct {
		method, path string
		fn           handlerFunc
	}{
		{http.MethodOptions, res.Path, a.metadata(res, http.MethodPost)},
		{http.MethodOptions, res.Path + ":id/", a.metadata(res, http.MethodPut)},
		{http.MethodGet, res.Path, c.list},
		{http.MethodPost, res.Path, c.create},
		{http.MethodPut, res.Path, c.bulkPut},
		{http.MethodPatch, res.Path, c.bulkPatch},
		{http.MethodDelete, res.Path, c.bulkDel},
		{http.MethodGet, res.Path + ":id/", c.detail},
		{http.MethodPut, res.Path + ":id/", c.put},
		{http.MethodPatch, res.Path + ":id/", c.patch},
		{http.MethodDelete, res.Path + ":id/", c.del},
	} {
		if h.fn != nil {
			a.handle(rt, h.method, h.path, a.authed(h.fn))
		}
	}
}

// handle registers a route and records it, so the schema test can check that every
// route is documented.
func (a *API) handle(rt *httprouter.Router, method, path string, h http.Handler) {
	a.routeList = append(a.routeList, [2]string{method, path})
	rt.Handler(method, path, observe.Route(path, h))
}

func registerResource(res *Resource) {
	for _, r := range resources {
		if r == res {
			return
		}
	}
	resources = append(resources, res)
}

// urlOf is the absolute URL of one object of an object type.
func (a *API) urlOf(r *http.Request, objectType string, id int64) string {
	for _, res := range resources {
		if res.Type() == objectType {
			return res.objURL(r, id)
		}
	}
	return ""
}

// stamp formats a time as the API shows it: RFC 3339, UTC, microseconds.
func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// index answers /api/ with its sections, as NetBox does.
func (a *API) index(w http.ResponseWriter, r *http.Request) error {
	httpjson.Write(w, http.StatusOK, map[string]string{
		"dcim": absURL(r, "/api/dcim/"), "extras": absURL(r, "/api/extras/"), "ipam": absURL(r, "/api/ipam/"),
		"plugins": absURL(r, "/api/plugins/"), "status": absURL(r, "/api/status/"), "users": absURL(r, "/api/users/"),
		"tenancy": absURL(r, "/api/tenancy/"), "virtualization": absURL(r, "/api/virtualization/"),
	})
	return nil
}

// apiSections are the browsable section roots under /api/.
var apiSections = []string{"/api/dcim/", "/api/ipam/", "/api/extras/", "/api/tenancy/", "/api/users/",
	"/api/virtualization/", "/api/plugins/", "/api/plugins/toolkit/"}

// sectionIndex answers a section root with the endpoints directly under it, as NetBox's
// browsable API does; the list is read from the routes themselves.
func (a *API) sectionIndex(section string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		out := map[string]string{}
		for _, rt := range a.routeList {
			rest, ok := strings.CutPrefix(rt[1], section)
			if !ok || rest == "" || rt[0] != http.MethodGet {
				continue
			}
			name, _, _ := strings.Cut(rest, "/")
			if name != "" && !strings.HasPrefix(name, ":") {
				out[name] = absURL(r, section+name+"/")
			}
		}
		httpjson.Write(w, http.StatusOK, out)
		return nil
	}
}

// status answers /api/status/ without authentication.
func (a *API) status(w http.ResponseWriter, r *http.Request) error {
	counts, err := a.DB.Counts(r.Context())
	if err != nil {
		return err
	}
	body := map[string]any{
		"fieldkit-version": a.Version, "netbox-version": APIVersion, "python-version": nil,
		"plugins":        map[string]string{"netbox_toolkit_plugin": a.Version},
		"uptime_seconds": int64(time.Since(a.started).Seconds()), "counts": counts,
	}
	if a.Health != nil {
		for k, v := range a.Health(r.Context()) {
			body[k] = v
		}
	}
	httpjson.Write(w, http.StatusOK, body)
	return nil
}
