package handlers

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"fieldkit/store"
)

// tagResource: extras.tag, put on devices and commands.
var tagResource = &Resource{
	Type: store.TypeTag, Path: pathTags, Name: "Tag",
	Filters: map[string]Filter{
		"name": {Path: "name", Lookups: true}, "slug": {Path: "slug", Lookups: true},
		"color": {Path: "color", Lookups: true}, "description": {Path: "description", Lookups: true},
	},
	Ordering: map[string]string{"id": "t.id", "name": "t.name", "slug": "t.slug", "color": "t.color",
		"created": "t.created", "last_updated": "t.last_updated"},
	DefaultOrder: "name",
	Search:       []string{"t.name", "t.slug", "t.description"},
	Fields: []FieldDoc{
		{Name: "id", Type: "integer", ReadOnly: true}, {Name: "url", Type: "string", ReadOnly: true},
		{Name: "display", Type: "string", ReadOnly: true},
		{Name: "name", Type: "string", Required: true, MaxLength: 100},
		{Name: "slug", Type: "string", Required: true, MaxLength: 100},
		{Name: "color", Type: "string", MaxLength: 6, Doc: `six hex digits, default "9e9e9e"`},
		{Name: "description", Type: "string", MaxLength: 200},
		{Name: "created", Type: "datetime", ReadOnly: true}, {Name: "last_updated", Type: "datetime", ReadOnly: true},
	},
}

var colorRE = regexp.MustCompile(`^[0-9a-fA-F]{6}$`)

func (a *API) tagCRUD() crudSet {
	wr := formWriter([]string{"name", "slug", "color", "description"},
		tagInput, a.DB.CreateTag, a.DB.UpdateTag, a.DB.DeleteTag)
	return crudOf(a, tagResource, wr, a.DB.Tags, func(t store.Tag) int64 { return t.ID }, renderTag)
}

func tagInput(_ context.Context, f *form, create bool) store.TagInput {
	var in store.TagInput
	in.Name = strPtr(f, "name", create, 100)
	in.Slug = slugField(f, create)
	if s, ok := f.Str("color", false, 0); ok {
		if !colorRE.MatchString(s) {
			f.Errs.Add("color", "Enter a valid hexadecimal RGB color code (six digits, e.g. 9e9e9e).")
		}
		s = strings.ToLower(s)
		in.Color = &s
	}
	in.Description = strPtr(f, "description", false, 200)
	return in
}

func renderTag(r *http.Request, t store.Tag, brief bool) any {
	n := briefTag(r, t.ID, t.Name, t.Slug, t.Color)
	n["description"] = t.Description
	if brief {
		return n
	}
	n["created"] = stamp(t.Created)
	n["last_updated"] = stamp(t.LastUpdated)
	return n
}
