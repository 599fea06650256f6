package handlers

import (
	"context"
	"net/http"

	"fieldkit/store"
)

// siteResource is the exemplar of a simple inventory resource.
var siteResource = &Resource{
	Type: store.TypeSite, Path: pathSites, Name: "Site",
	Filters: map[string]Filter{
		"name": {Path: "name", Lookups: true}, "slug": {Path: "slug", Lookups: true},
		"description": {Path: "description", Lookups: true},
	},
	Ordering:     map[string]string{"id": "t.id", "name": "t.name", "slug": "t.slug", "created": "t.created", "last_updated": "t.last_updated"},
	DefaultOrder: "name",
	Search:       []string{"t.name", "t.slug", "t.description"},
	Fields: []FieldDoc{
		{Name: "id", Type: "integer", ReadOnly: true}, {Name: "url", Type: "string", ReadOnly: true},
		{Name: "display", Type: "string", ReadOnly: true},
		{Name: "name", Type: "string", Required: true, MaxLength: 100},
		{Name: "slug", Type: "string", Required: true, MaxLength: 100},
		{Name: "description", Type: "string", MaxLength: 200},
		{Name: "created", Type: "datetime", ReadOnly: true}, {Name: "last_updated", Type: "datetime", ReadOnly: true},
	},
}

func (a *API) siteCRUD() crudSet {
	res := siteResource
	wr := formWriter([]string{"name", "slug", "description", "tags", "custom_fields"},
		siteInput, a.DB.CreateSite, a.DB.UpdateSite, a.DB.DeleteSite)
	return crudOf(a, res, wr, a.DB.Sites, func(s store.Site) int64 { return s.ID }, a.renderSite)
}

func siteInput(_ context.Context, f *form, create bool) store.SiteInput {
	var in store.SiteInput
	if s, ok := f.Str("name", create, 100); ok {
		in.Name = &s
	}
	if s, ok := f.Str("slug", create, 100); ok {
		if !validSlug(s) {
			f.Errs.Add("slug", "Enter a valid slug consisting of letters, numbers, underscores or hyphens.")
		}
		in.Slug = &s
	}
	if s, ok := f.Str("description", false, 200); ok {
		in.Description = &s
	}
	return in
}

// briefSite is the nested form used wherever a site is referenced.
func (a *API) briefSite(r *http.Request, id int64, name, slug string) nested {
	return nested{"id": id, "url": siteResource.objURL(r, id), "display": name, "name": name, "slug": slug}
}

func (a *API) renderSite(r *http.Request, s store.Site, brief bool) any {
	n := a.briefSite(r, s.ID, s.Name, s.Slug)
	if brief {
		n["description"] = s.Description
		return n
	}
	n["description"] = s.Description
	n["tags"] = []any{}
	n["custom_fields"] = map[string]any{}
	n["created"] = stamp(s.Created)
	n["last_updated"] = stamp(s.LastUpdated)
	return n
}
