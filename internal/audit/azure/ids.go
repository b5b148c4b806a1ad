package azure

import "strings"

// ARM ids: /subscriptions/SUB/resourceGroups/RG/providers/NS/TYPE/NAME[/TYPE/NAME...].
// Azure compares them case-insensitively; so does every lookup here.

func idKey(id string) string { return strings.ToLower(strings.TrimSuffix(id, "/")) }

func sameID(a, b string) bool { return a != "" && idKey(a) == idKey(b) }

// idSegment returns the value after the segment named key ("resourceGroups",
// "virtualNetworks", ...), matched case-insensitively, or "".
func idSegment(id, key string) string {
	parts := strings.Split(strings.Trim(id, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if strings.EqualFold(parts[i], key) {
			return parts[i+1]
		}
	}
	return ""
}

func resourceGroupOf(id string) string { return idSegment(id, "resourceGroups") }

func subscriptionOf(id string) string { return idSegment(id, "subscriptions") }

// lastName is the last segment of an id: the resource's own name.
func lastName(id string) string {
	id = strings.TrimSuffix(id, "/")
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[i+1:]
	}
	return id
}

// parentID drops the last /TYPE/NAME pair: a subnet's VNet.
func parentID(id string) string {
	id = strings.TrimSuffix(id, "/")
	for n := 0; n < 2; n++ {
		i := strings.LastIndexByte(id, '/')
		if i < 0 {
			return ""
		}
		id = id[:i]
	}
	return id
}

// typeOfID is the resource type an id names: Microsoft.Network/virtualNetworks/subnets.
func typeOfID(id string) string {
	parts := strings.Split(strings.Trim(id, "/"), "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if strings.EqualFold(parts[i], "providers") {
			rest := parts[i+1:]
			t := rest[0]
			for j := 1; j < len(rest); j += 2 {
				t += "/" + rest[j]
			}
			return t
		}
	}
	return ""
}

// scopeCovers reports whether an RBAC assignment at scope applies to the
// resource id: the scope is the id itself or one of its ancestors (resource
// group, subscription, the root "/"). Management-group scopes are listed by
// `az role assignment list --include-inherited` only when they apply, so
// they are taken as covering.
func scopeCovers(scope, id string) bool {
	s, r := idKey(scope), idKey(id)
	if s == "" || s == "/" {
		return true
	}
	if strings.HasPrefix(s, "/providers/microsoft.management/managementgroups/") {
		return true
	}
	return r == s || strings.HasPrefix(r, s+"/")
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func boolv(p *bool) bool { return p != nil && *p }
