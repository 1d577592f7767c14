package auth

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/textcut"
	"github.com/plumehq/plume/shared/web"
)

// param is the rule of one path wildcard: every value a key is built from is checked here,
// by the Router, before its handler runs and before any read, so that no route can forget it
// and no value too long for a DynamoDB key (2 KB partition, 1 KB sort) reaches the store.
//
// A value the rule refuses answers 400 invalid_request for names a client chooses (slugs,
// hashes, model ids, version numbers) and 404 not_found for ids Plume generates (judges,
// feedback links, prompt versions, link tokens): a malformed generated id names nothing, as an
// unknown one does. Rules marked "shape" bound only length and characters; the handler's finer
// check (with its own status, e.g. 404 for an unknown span) stays.
type param struct {
	valid func(string) bool
	bad   func(value string) error
}

// params holds the rule of every wildcard a route may use. Registering a pattern with a
// wildcard missing here panics, so a new route cannot skip the check.
var params = map[string]param{
	// Project ids are UUIDs; the Router's project check answers 403 to any other project.
	// KeyProject ("{project_id}" itself) names the key's own project (zeroeval's log_completion).
	"project_id": {func(v string) bool { return v == KeyProject || isUUID(v) }, func(string) error { return errs.Forbidden("this API key belongs to another project") }},
	"slug":       {prompt.IsSlug, invalidSlug},
	"task":       {prompt.IsSlug, invalidSlug},
	"version_id": {isUUID, notFound("prompt version %s not found")},
	"hash": {hexPattern.MatchString, func(v string) error {
		return errs.Invalid("content hash %s is not a 64-character hex SHA-256", quote(v))
	}},
	"version": {isVersion, func(v string) error {
		return errs.Invalid("version must be a positive integer, not %s", quote(v))
	}},
	// Shape: "<tag>:pin", "<tag>:split", "<tag>:end-split"; the handler checks the tag and the
	// action.
	"tag_action": {shape(81, isTagAction), func(v string) error {
		return errs.Invalid("tag action %s is not <tag>:pin, <tag>:split or <tag>:end-split", quote(v))
	}},
	// Shape: span ids are UUIDs; the handlers answer a short non-UUID in their own way (400 on
	// attachments, 404 on evaluations).
	"span_id": {shape(36, isUUIDChar), func(v string) error {
		return errs.Invalid("span_id must be a UUID, not %s", quote(v))
	}},
	// Shape, as feedback.Service.Submit and ReadUnified check them (1 to 128 characters).
	"completion_id": {shape(maxEntityIDLen, isPrintable), func(string) error {
		return errs.Invalid("completion_id must have 1 to %d characters", maxEntityIDLen)
	}},
	"entity_type": {oneOf("span", "trace", "session"), func(v string) error {
		return errs.Invalid(`entity_type must be "span", "trace" or "session", not %s`, quote(v))
	}},
	"entity_id": {shape(maxEntityIDLen, isPrintable), func(string) error {
		return errs.Invalid("entity_id must have 1 to %d characters", maxEntityIDLen)
	}},
	// Signals: an entity may also be a completion (shared/signal.EntityTypes); A/B test
	// names are the SDK's choice names (shared/signal.MaxKeyLen).
	"signal_entity_type": {oneOf("span", "trace", "session", "completion"), func(v string) error {
		return errs.Invalid(`entity_type must be "span", "trace", "session" or "completion", not %s`, quote(v))
	}},
	"test_name": {shape(128, isPrintable), func(string) error {
		return errs.Invalid("an A/B test name has 1 to 128 characters")
	}},
	"judge_id": {isUUID, notFound("judge %s not found")},
	"trace_id": {isUUID, notFound("trace %s not found")},
	"link_id":  {isUUID, notFound("feedback link %s not found")},
	"key_id":   {isUUID, notFound("API key %s not found")},
	// As pricing.ValidateOverride: 1 to 256 characters, no control characters.
	"model": {shape(maxModelIDLen, isPrintable), func(string) error {
		return errs.Invalid("model id must be 1 to %d characters without control characters", maxModelIDLen)
	}},
	// Shape: feedback-link tokens are "plf_" and 32 random bytes in base64url (43 characters);
	// feedback.Links.Open bounds them at 100 bytes, as here.
	"token":  {tokenPattern.MatchString, func(string) error { return errs.NotFound("no such feedback link") }},
	"run_id": {isUUID, notFound("optimization run %s not found")},
	// Webhook ids are "wh_" + a UUID; delivery ids "dlv_<13-digit ms>_<12 hex>".
	"webhook_id": {webhookPattern.MatchString, notFound("webhook %s not found")},
	// Monitor ids are "mon_" + a UUID.
	"monitor_id":  {monitorPattern.MatchString, notFound("monitor %s not found")},
	"delivery_id": {deliveryPattern.MatchString, notFound("delivery %s not found")},
	"dataset": {dataset.IsName, func(v string) error {
		return errs.Invalid("dataset name %s is invalid: use 1 to 128 letters, digits, spaces, '.', '_' or '-'", quote(v))
	}},
	"upload_id":     {isUUID, notFound("upload %s not found")},
	"experiment_id": {isUUID, notFound("experiment %s not found")},
	// Shape: "<run id>:<action>"; the handler checks the action.
	"run_action": {shape(64, isTagAction), func(v string) error {
		return errs.Invalid("run action %s is not <run id>:cancel, :preview-deploy or :deploy", quote(v))
	}},
	// Shape: session ids are the client's (1 to 128 characters, shared/trace.MaxIDLen).
	"session_id": {shape(maxEntityIDLen, isPrintable), notFound("session %s not found")},
}

const (
	maxEntityIDLen = 128
	maxModelIDLen  = 256
)

// The patterns of ids, each the regular expression in its comment written out: a regexp with a
// bounded repeat ({64}, {1,96}) compiles to as many copies of its class, which was most of
// this package's init, in every function (issue 31). TestPatternsAsRegexps holds each to its
// expression.
var (
	// ^[0-9a-fA-F]{64}$
	hexPattern     = matchFunc(func(v string) bool { return len(v) == 64 && all(v, isHexDigit) })
	versionPattern = regexp.MustCompile(`^0*[1-9][0-9]*$`)
	// ^plf_[A-Za-z0-9_-]{1,96}$
	tokenPattern = matchFunc(func(v string) bool {
		rest, ok := strings.CutPrefix(v, "plf_")
		return ok && len(rest) >= 1 && len(rest) <= 96 && all(rest, isTokenChar)
	})
	// ^wh_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$
	webhookPattern = prefixedUUID("wh_")
	// ^mon_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$
	monitorPattern = prefixedUUID("mon_")
	// ^dlv_[0-9]{13}_[0-9a-f]{12}$
	deliveryPattern = matchFunc(func(v string) bool {
		rest, ok := strings.CutPrefix(v, "dlv_")
		return ok && len(rest) == 26 && rest[13] == '_' && all(rest[:13], isDigit) && all(rest[14:], isLowerHex)
	})
)

// matchFunc is a pattern written as a function.
type matchFunc func(string) bool

// MatchString reports whether s matches, as a regexp's MatchString does.
func (f matchFunc) MatchString(s string) bool { return f(s) }

// prefixedUUID matches prefix and a UUID in lowercase hex (8-4-4-4-12).
func prefixedUUID(prefix string) matchFunc {
	return func(v string) bool {
		id, ok := strings.CutPrefix(v, prefix)
		if !ok || len(id) != 36 {
			return false
		}
		for i := range len(id) {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if id[i] != '-' {
					return false
				}
			} else if !isLowerHex(id[i]) {
				return false
			}
		}
		return true
	}
}

// all reports whether ok holds for every byte of s.
func all(s string, ok func(byte) bool) bool {
	for i := range len(s) {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isLowerHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }
func isHexDigit(c byte) bool { return isLowerHex(c) || 'A' <= c && c <= 'F' }
func isTokenChar(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-'
}

// wildcardsOf returns the names of a pattern's wildcards ("model" for "{model...}"), panicking
// on one that params does not know.
func wildcardsOf(pattern string) []string {
	var names []string
	for rest := pattern; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			panic(fmt.Sprintf("auth: route %q has an unclosed wildcard", pattern))
		}
		name := strings.TrimSuffix(rest[i+1:i+j], "...")
		rest = rest[i+j+1:]
		if name == "$" {
			continue
		}
		if _, ok := params[name]; !ok {
			panic(fmt.Sprintf("auth: route %q: wildcard {%s} has no rule in auth's params table", pattern, name))
		}
		names = append(names, name)
	}
}

// ErrorWriter writes the answer to a refused request: web.Error by default; an area that
// answers in its own format (the HTML feedback pages) passes its own to HandleOpen.
type ErrorWriter func(w http.ResponseWriter, r *http.Request, err error)

// checkParams answers a request whose path wildcards break their rules with fail, before next
// runs. The access log then shows the route's path rather than the refused value.
func checkParams(pattern string, names []string, fail ErrorWriter, next http.Handler) http.Handler {
	if len(names) == 0 {
		return next
	}
	_, path, _ := strings.Cut(pattern, " ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, name := range names {
			rule := params[name]
			if v := r.PathValue(name); !rule.valid(v) {
				err := rule.bad(v)
				web.LogPathAs(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fail(w, r, err) })).ServeHTTP(w, r)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func invalidSlug(v string) error {
	return errs.Invalid("prompt slug %s is invalid: use 1 to 128 lowercase letters, digits and hyphens", quote(v))
}

func notFound(format string) func(string) error {
	return func(v string) error { return errs.NotFound(format, quote(v)) }
}

// quote quotes a refused value for a message, cut to 64 bytes.
func quote(v string) string { return fmt.Sprintf("%q", textcut.Quote(v, 64)) }

// isVersion reports whether s is a positive integer of at most 10 digits (versionSK's width).
func isVersion(s string) bool { return len(s) <= 10 && versionPattern.MatchString(s) }

// isUUID reports whether s is a UUID in its 36-character form, in either case: as
// ValidateProjectID has it.
func isUUID(s string) bool { return len(s) == 36 && uuid.Validate(s) == nil }

func isUUIDChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-'
}

func isTagAction(c byte) bool { return isUUIDChar(c) || c == ':' || c == '_' || c == '.' }

// isPrintable refuses control characters (C0 and DEL) only: model ids and completion ids may
// hold any other text.
func isPrintable(c byte) bool { return c >= 0x20 && c != 0x7f }

// shape accepts 1 to max bytes of UTF-8 (DynamoDB strings are UTF-8), each byte allowed by ok.
func shape(max int, ok func(byte) bool) func(string) bool {
	return func(s string) bool {
		if s == "" || len(s) > max || !utf8.ValidString(s) {
			return false
		}
		for i := 0; i < len(s); i++ {
			if !ok(s[i]) {
				return false
			}
		}
		return true
	}
}

func oneOf(values ...string) func(string) bool {
	return func(s string) bool {
		for _, v := range values {
			if s == v {
				return true
			}
		}
		return false
	}
}
