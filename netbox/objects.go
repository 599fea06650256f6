package netbox

import (
	"encoding/json"
	"fmt"
)

// The objects as NetBox 4 serves them, with the fields the sync reads. A reference is
// NetBox's nested form ({id, url, display, name…}); a choice is {value, label}.

// ref is a nested reference.
type ref struct {
	ID int64 `json:"id"`
}

// choice is a choice field: {value, label}, or the bare value older clients see.
type choice struct{ Value string }

func (c *choice) UnmarshalJSON(b []byte) error {
	var obj struct {
		Value json.RawMessage `json:"value"`
	}
	if len(b) > 0 && b[0] == '{' {
		if err := json.Unmarshal(b, &obj); err != nil {
			return err
		}
		b = obj.Value
	}
	var s any
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s != nil {
		c.Value = fmt.Sprint(s)
	}
	return nil
}

// value is a choice's value, "" when null.
func (c *choice) value() string {
	if c == nil {
		return ""
	}
	return c.Value
}

// common are the fields every synced object has.
type common struct {
	ID           int64          `json:"id"`
	Description  string         `json:"description"`
	Tags         []ref          `json:"tags"`
	CustomFields map[string]any `json:"custom_fields"`
	LastUpdated  string         `json:"last_updated"`
}

type nbTag struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Slug        string `json:"slug"`
	Color       string `json:"color"`
	Description string `json:"description"`
	LastUpdated string `json:"last_updated"`
}

// nbSite is a site, or a platform (the same fields matter).
type nbSite struct {
	common
	Name string `json:"name"`
	Slug string `json:"slug"`
}

type nbVLAN struct {
	common
	VID    int64   `json:"vid"`
	Name   string  `json:"name"`
	Site   *ref    `json:"site"`
	Status *choice `json:"status"`
}

type nbDevice struct {
	common
	Name       *string `json:"name"`
	Site       *ref    `json:"site"`
	Platform   *ref    `json:"platform"`
	Status     *choice `json:"status"`
	PrimaryIP4 *ref    `json:"primary_ip4"`
	PrimaryIP6 *ref    `json:"primary_ip6"`
}

type nbInterface struct {
	common
	Device       *ref    `json:"device"`
	Name         string  `json:"name"`
	Type         *choice `json:"type"`
	Enabled      *bool   `json:"enabled"`
	Mode         *choice `json:"mode"`
	UntaggedVLAN *ref    `json:"untagged_vlan"`
	TaggedVLANs  []ref   `json:"tagged_vlans"`
}

type nbIPAddress struct {
	common
	Address            string  `json:"address"`
	Status             *choice `json:"status"`
	DNSName            string  `json:"dns_name"`
	AssignedObjectType *string `json:"assigned_object_type"`
	AssignedObjectID   *int64  `json:"assigned_object_id"`
}

// tagRefs are the tags an object carries, for the tags phase.
func tagRefs(body json.RawMessage) []int64 {
	var c struct {
		Tags []ref `json:"tags"`
	}
	_ = json.Unmarshal(body, &c) // staged from a NetBox list: an object
	ids := make([]int64, len(c.Tags))
	for i, t := range c.Tags {
		ids[i] = t.ID
	}
	return ids
}
