package auth

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/web"
)

// Role is what a key may do, checked by the Router on every route before its handler runs.
type Role string

// The roles, from the most to the least trusted.
const (
	// RoleAdmin may call every route, key management included.
	RoleAdmin Role = "admin"
	// RoleMember may call every route but key management.
	RoleMember Role = "member"
	// RoleIngest may call only what applications need (the routes registered with
	// AllowIngest): writing spans, traces, sessions, attachments and feedback, reading and
	// ensuring prompts, and the model gateway. It reads no traces and manages nothing, so that
	// a key shipped inside an application leaks no data when it leaks.
	RoleIngest Role = "ingest"
)

// DefaultRole is the role of a key issued without one, and of keys stored before roles
// existed: they keep working as they did.
const DefaultRole = RoleAdmin

// Roles are every role, from the most to the least trusted.
var Roles = []Role{RoleAdmin, RoleMember, RoleIngest}

// ParseRole returns the role named s; an empty s is DefaultRole. Any other name is an
// errs.CodeInvalid error.
func ParseRole(s string) (Role, error) {
	if s == "" {
		return DefaultRole, nil
	}
	for _, r := range Roles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", errs.Invalid("role %q is not one of %s", s, roleNames(Roles))
}

// Access is the roles a route admits, declared when it is registered. The zero value,
// Members, is the default: a route that says nothing is closed to ingest keys.
type Access uint8

const (
	// Members admits member and admin keys: the default of Handle and HandleFunc.
	Members Access = iota
	// AllowIngest admits every key, ingest keys included: for the routes applications call.
	AllowIngest
	// AdminOnly admits admin keys only: for key management.
	AdminOnly
)

// Roles returns the roles a admits, from the most to the least trusted.
func (a Access) Roles() []Role {
	switch a {
	case AllowIngest:
		return []Role{RoleAdmin, RoleMember, RoleIngest}
	case AdminOnly:
		return []Role{RoleAdmin}
	}
	return []Role{RoleAdmin, RoleMember}
}

// Allows reports whether a key of role r may call a route of access a.
func (a Access) Allows(r Role) bool {
	for _, ok := range a.Roles() {
		if r == ok {
			return true
		}
	}
	return false
}

// String names the roles a admits, as messages show them: "admin or member".
func (a Access) String() string { return roleNames(a.Roles()) }

// Check returns nil when p's role may call a route of access a, else an errs.CodeForbidden
// error that names the roles the route needs and the key's own.
func (a Access) Check(p Principal) error {
	if a.Allows(p.Role) {
		return nil
	}
	return errs.Forbidden("this route needs an API key with the %s role; this key's role is %s", a, p.Role)
}

// requireRole answers 403 when the caller's role may not call a route of access a. It runs
// behind the Authenticator's Middleware, so the caller is known, and before the project check
// and any read.
func requireRole(a Access, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := FromContext(r.Context())
		if err := a.Check(p); err != nil {
			web.Error(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// accessOf returns the one Access of a registration, Members when none is given.
func accessOf(pattern string, access []Access) Access {
	switch len(access) {
	case 0:
		return Members
	case 1:
		if access[0] > AdminOnly {
			panic(fmt.Sprintf("auth: route %q: unknown access %d", pattern, access[0]))
		}
		return access[0]
	}
	panic(fmt.Sprintf("auth: route %q is registered with %d accesses; give one", pattern, len(access)))
}

// roleNames joins role names as "admin, member or ingest".
func roleNames(roles []Role) string {
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = string(r)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
