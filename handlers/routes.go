package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"fieldkit/store"
	"fieldkit/web"
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
	pathSchedules   = "/api/plugins/toolkit/schedules/"
	pathWebhooks    = "/api/extras/webhooks/"
	pathEventRules  = "/api/extras/event-rules/"
	pathDeliveries  = "/api/plugins/toolkit/webhook-deliveries/"
	pathConfigVers  = "/api/plugins/toolkit/config-versions/"
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
	siteResource          = &Resource{Model: store.Sites, Path: pathSites}
	platformResource      = &Resource{Model: store.Platforms, Path: pathPlatforms, hooks: platformHooks}
	deviceResource        = &Resource{Model: store.Devices, Path: pathDevices}
	interfaceResource     = &Resource{Model: store.Interfaces, Path: pathInterfaces}
	vlanResource          = &Resource{Model: store.VLANs, Path: pathVLANs}
	ipAddressResource     = &Resource{Model: store.IPAddresses, Path: pathIPAddresses, hooks: ipHooks}
	tagResource           = &Resource{Model: store.Tags, Path: pathTags}
	userResource          = &Resource{Model: store.Users, Path: pathUsers, hooks: userHooks}
	groupResource         = &Resource{Model: store.Groups, Path: pathGroups}
	tokenResource         = &Resource{Model: store.Tokens, Path: pathTokens, hooks: tokenHooks}
	permissionResource    = &Resource{Model: store.Permissions, Path: pathPermissions, hooks: permissionHooks}
	commandResource       = &Resource{Model: store.Commands, Path: pathCommands, hooks: commandHooks, Cache: true}
	logResource           = &Resource{Model: store.CommandLogs, Path: pathCommandLogs, Cache: true}
	scheduleResource      = &Resource{Model: store.Schedules, Path: pathSchedules, hooks: scheduleHooks}
	webhookResource       = &Resource{Model: store.Webhooks, Path: pathWebhooks, hooks: webhookHooks}
	eventRuleResource     = &Resource{Model: store.EventRules, Path: pathEventRules, hooks: eventRuleHooks}
	deliveryResource      = &Resource{Model: store.Deliveries, Path: pathDeliveries}
	configVersionResource = &Resource{Model: store.ConfigVersions, Path: pathConfigVers}
)

// routes registers every route of the server: it is the one place to read to know
// what the server answers. The web interface's own routes (pages, login session,
// web-only endpoints) are registered by ui.UI.Routes, called at the end through
// Options.UI. TestRouteTable prints the whole table.
func (a *API) routes(rt *web.Router) {
	get := func(path string, h web.HandlerFunc) { rt.Handle(http.MethodGet, path, h) }

	// The API's root, its sections and the server's status: no authentication.
	a.public(rt, http.MethodGet, "/api/", a.index)
	for _, sec := range apiSections {
		a.public(rt, http.MethodGet, sec, a.sectionIndex(sec))
	}
	a.public(rt, http.MethodGet, "/api/status/", a.status)

	// Inventory (dcim, ipam, extras).
	a.resource(rt, siteResource)
	a.resource(rt, platformResource)
	a.resource(rt, deviceResource)
	rt.Handle(http.MethodDelete, pathDevices+":id/host-key/", a.authed(a.clearHostKey))
	a.resource(rt, tagResource)
	a.resource(rt, interfaceResource)
	a.resource(rt, vlanResource)
	a.resource(rt, ipAddressResource)
	for _, res := range readOnlyResources {
		a.resource(rt, res)
	}
	rt.Handle(http.MethodPost, pathImport, a.authed(a.importFile))
	rt.Handle(http.MethodOptions, pathImport, a.authed(a.importMetadata))
	rt.Handle(http.MethodPost, pathInventorySync, a.authed(a.runInventorySync))
	get(pathInventorySync, a.authed(a.syncStatus))

	// Users, groups, tokens, permissions.
	a.resource(rt, userResource)
	a.resource(rt, groupResource)
	tokens := a.declared(tokenResource)
	tokens.create = a.createToken // the key is shown once, in the create's response
	a.crud(rt, tokenResource, tokens)
	a.public(rt, http.MethodPost, pathProvision, a.provisionToken)
	a.resource(rt, permissionResource)

	// The toolkit plugin: commands and their execution.
	a.resource(rt, commandResource)
	rt.Handle(http.MethodPost, pathCommands+":id/execute/", a.authed(a.execute))
	rt.Handle(http.MethodPost, pathCommands+"bulk-execute/", a.authed(a.bulkExecute))
	rt.Handle(http.MethodPost, pathCommands+":id/validate-variables/", a.authed(a.validateVariables))
	get(pathCommands+":id/variable-choices/", a.authed(a.variableChoices))

	// The toolkit plugin: command logs (read-only but for their notes), their statistics and export.
	a.resource(rt, logResource)
	get(pathCommandLogs+"statistics/", a.authed(a.logStatistics))
	get(pathCommandLogs+"export/", a.authed(a.logExport))
	get(pathCommandLogs+":id/diff/", a.authed(a.logDiff))
	get(pathCommandLogs+"history/", a.authed(a.logHistory))
	rt.Handle(http.MethodPatch, pathCommandLogs+":id/", a.authed(a.patchLogNotes))

	// Work that runs by itself: schedules, and running one now.
	a.resource(rt, scheduleResource)
	rt.Handle(http.MethodPost, pathSchedules+":id/run/", a.authed(a.runSchedule))

	// Each device's last good config backup against its limit.
	get(pathBackupHealth, a.authed(a.backupHealth))

	// NetBox's webhooks and event rules, and what they delivered.
	a.resource(rt, webhookResource)
	a.resource(rt, eventRuleResource)
	a.resource(rt, deliveryResource)

	// The toolkit plugin: config versions (read-only), their diffs, raw text and collection.
	a.resource(rt, configVersionResource)
	get(pathConfigVers+":id/diff/", a.authed(a.configDiff))
	get(pathConfigVers+":id/raw/", a.authed(a.configRaw))
	get(pathConfigVers+"last-good/", a.authed(a.configLastGood))
	get(pathConfigVers+"search/", a.authed(a.configSearch))
	rt.Handle(http.MethodPost, pathConfigVers+"collect/", a.authed(a.configCollect))

	// Parsing without a device (template authors, tests).
	rt.Handle(http.MethodPost, pathParse, a.authed(a.parseOutput))

	// A hub's sites and the pushes of their records (hub.go), on a hub only.
	a.hubRoutes(rt)

	// The schema and its readers.
	a.public(rt, http.MethodGet, "/api/schema/", a.serveSchema)
	a.public(rt, http.MethodGet, "/api/docs/", a.docsPage)
	a.public(rt, http.MethodGet, "/api/docs/:file", a.docsAsset)
	a.public(rt, http.MethodGet, "/api/redoc/", a.redocPage)
	a.public(rt, http.MethodGet, "/api/redoc/:file", a.redocAsset)

	// The Prometheus metrics, when they are on (they check their own token).
	if a.Metrics != nil {
		rt.HandleHTTP(http.MethodGet, "/metrics", a.Metrics)
		rt.HandleHTTP(http.MethodHead, "/metrics", a.Metrics)
	}

	// The web interface.
	if a.UI != nil {
		a.UI(rt)
	}
}

// public routes method and path to a handler that needs no authentication, and
// records it so for the schema.
func (a *API) public(rt *web.Router, method, path string, h web.HandlerFunc) {
	a.publicPaths[path] = true
	rt.Handle(method, path, h)
}

// crudSet is the handlers of a NetBox-style resource: the single-object ones and the
// bulk ones on the list path (bulkwrite.go); nil ones are not routed.
type crudSet struct {
	list, detail, create, put, patch, del web.HandlerFunc
	bulkPut, bulkPatch, bulkDel           web.HandlerFunc
}

// crudOf builds the standard handlers of a resource from its loader, renderer and writer.
func crudOf(a *API, res *Resource, wr Writer, load Loader[store.Row], render Renderer[store.Row]) crudSet {
	id := store.Row.ID
	c := crudSet{
		list:   listHandler(a, res),
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
func (a *API) resource(rt *web.Router, res *Resource) { a.crud(rt, res, a.declared(res)) }

// crud routes a resource at its list path (list, create, and the bulk writes) and its
// detail path; OPTIONS on either describes its fields (metadata.go).
func (a *API) crud(rt *web.Router, res *Resource, c crudSet) {
	registerResource(res)
	for _, h := range []struct {
		method, path string
		fn           web.HandlerFunc
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
			rt.Handle(h.method, h.path, a.authed(h.fn))
		}
	}
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
	if p := pathOf(objectType); p != "" {
		return web.URL(r, p+strconv.FormatInt(id, 10)+"/")
	}
	return ""
}

// pathOf is the list path of the resource serving an object type, "" if none does.
func pathOf(objectType string) string {
	for _, res := range resources {
		if res.Type() == objectType {
			return res.Path
		}
	}
	return ""
}

// index answers /api/ with its sections, as NetBox does.
func (a *API) index(w http.ResponseWriter, r *http.Request) error {
	web.Write(w, http.StatusOK, map[string]string{
		"dcim": web.URL(r, "/api/dcim/"), "extras": web.URL(r, "/api/extras/"), "ipam": web.URL(r, "/api/ipam/"),
		"plugins": web.URL(r, "/api/plugins/"), "status": web.URL(r, "/api/status/"), "users": web.URL(r, "/api/users/"),
		"tenancy": web.URL(r, "/api/tenancy/"), "virtualization": web.URL(r, "/api/virtualization/"),
	})
	return nil
}

// apiSections are the browsable section roots under /api/.
var apiSections = []string{"/api/dcim/", "/api/ipam/", "/api/extras/", "/api/tenancy/", "/api/users/",
	"/api/virtualization/", "/api/plugins/", "/api/plugins/toolkit/"}

// sectionIndex answers a section root with the endpoints directly under it, as NetBox's
// browsable API does; the list is read from the routes themselves.
func (a *API) sectionIndex(section string) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		out := map[string]string{}
		for _, rt := range a.router.Routes() {
			rest, ok := strings.CutPrefix(rt.Path, section)
			if !ok || rest == "" || rt.Method != http.MethodGet {
				continue
			}
			name, _, _ := strings.Cut(rest, "/")
			if name != "" && !strings.HasPrefix(name, ":") {
				out[name] = web.URL(r, section+name+"/")
			}
		}
		web.Write(w, http.StatusOK, out)
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
	web.Write(w, http.StatusOK, body)
	return nil
}
