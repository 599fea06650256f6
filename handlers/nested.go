package handlers

import "net/http"

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
)

// objectURL is the absolute URL of one object under a list path.
func objectURL(r *http.Request, listPath string, id int64) string {
	return absURL(r, listPath+itoa(id)+"/")
}

// The nested (brief) forms used wherever one object refers to another.

func briefPlatform(r *http.Request, id int64, name, slug string) nested {
	return nested{"id": id, "url": objectURL(r, pathPlatforms, id), "display": name, "name": name, "slug": slug}
}

func briefDevice(r *http.Request, id int64, name string) nested {
	return nested{"id": id, "url": objectURL(r, pathDevices, id), "display": name, "name": name}
}

func briefTag(r *http.Request, id int64, name, slug, color string) nested {
	return nested{"id": id, "url": objectURL(r, pathTags, id), "display": name, "name": name, "slug": slug, "color": color}
}

func briefUser(r *http.Request, id int64, username string) nested {
	return nested{"id": id, "url": objectURL(r, pathUsers, id), "display": username, "username": username}
}

func briefGroup(r *http.Request, id int64, name string) nested {
	return nested{"id": id, "url": objectURL(r, pathGroups, id), "display": name, "name": name}
}

func briefCommand(r *http.Request, id int64, name string) nested {
	return nested{"id": id, "url": objectURL(r, pathCommands, id), "display": name, "name": name}
}

func briefInterface(r *http.Request, id int64, name string, device nested) nested {
	return nested{"id": id, "url": objectURL(r, pathInterfaces, id), "display": name, "name": name, "device": device}
}

func briefVLAN(r *http.Request, id int64, vid int64, name string) nested {
	return nested{"id": id, "url": objectURL(r, pathVLANs, id), "display": name + " (" + itoa(vid) + ")", "vid": vid, "name": name}
}

func briefIP(r *http.Request, id int64, address string) nested {
	return nested{"id": id, "url": objectURL(r, pathIPAddresses, id), "display": address, "address": address, "family": ipFamily(address)}
}

func ipFamily(address string) map[string]any {
	for _, c := range address {
		if c == ':' {
			return map[string]any{"value": 6, "label": "IPv6"}
		}
	}
	return map[string]any{"value": 4, "label": "IPv4"}
}
