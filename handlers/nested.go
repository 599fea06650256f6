package handlers

import "net/http"

// objectURL is the absolute URL of one object under a list path.
func objectURL(r *http.Request, listPath string, id int64) string {
	return absURL(r, listPath+itoa(id)+"/")
}

// The nested forms of users and groups, for the resources not yet rendered from their
// declaration.

func briefUser(r *http.Request, id int64, username string) nested {
	return nested{"id": id, "url": objectURL(r, pathUsers, id), "display": username, "username": username}
}

func briefGroup(r *http.Request, id int64, name string) nested {
	return nested{"id": id, "url": objectURL(r, pathGroups, id), "display": name, "name": name}
}
