package openapi

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/router"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
)

// The library reports schema failures as English sentences made by the
// jsonschema package ("got number, want string", "maxItems: got 6, want 5")
// and by its own parameter checks. The patterns below recognise those shapes
// and say the same thing more plainly; anything unrecognised passes through.
var (
	reType        = regexp.MustCompile(`^got (\w+), want (.+)$`)
	reRequired    = regexp.MustCompile(`^missing propert(?:y|ies) (.+)$`)
	reEnum        = regexp.MustCompile(`^value must be one of (.+)$`)
	reBound       = regexp.MustCompile(`^(minimum|maximum|exclusiveMinimum|exclusiveMaximum|minLength|maxLength|minItems|maxItems|minProperties|maxProperties): got (\S+), want (\S+)$`)
	reFormat      = regexp.MustCompile(`^(.+) is not valid ([\w-]+): (.+)$`)
	reOneOfMany   = regexp.MustCompile(`^'oneOf' failed, subschemas (\d+), (\d+) matched$`)
	reParamEnum   = regexp.MustCompile(`^(?:Array item|Value) '(.*)' does not match any enum values: \[(.*)\]$`)
	reParamType   = regexp.MustCompile(`^Value '(.*)' is not a valid (\w+)$`)
	reQuoted      = regexp.MustCompile(`'((?:[^'\\]|\\.)*)'`)
	reOneOfBranch = regexp.MustCompile(`^(.*/oneOf)/(\d+)(?:/|$)`)
	reCommas      = regexp.MustCompile(`value '(.*)' is encoded as an object or an array using commas`)
	reReserved    = regexp.MustCompile(`^value '(.*)' contains reserved characters`)
	reEmptyBody   = regexp.MustCompile(`(?i)request body is empty`)
	reEncoding    = regexp.MustCompile(`^value is not '([\w-]+)' encoded: (.+)$`)
	reDecode      = regexp.MustCompile(`cannot be decoded: (?:decode (?:request|response) body as [^:]+: )?(.+)$`)
)

var boundWords = map[string]string{
	"minimum":          "must be at least %[2]s (got %[1]s)",
	"maximum":          "must be at most %[2]s (got %[1]s)",
	"exclusiveMinimum": "must be greater than %[2]s (got %[1]s)",
	"exclusiveMaximum": "must be less than %[2]s (got %[1]s)",
	"minLength":        "must be at least %[2]s characters long (got %[1]s)",
	"maxLength":        "must be at most %[2]s characters long (got %[1]s)",
	"minItems":         "must have at least %[2]s items (got %[1]s)",
	"maxItems":         "must have at most %[2]s items (got %[1]s)",
	"minProperties":    "must have at least %[2]s entries (got %[1]s)",
	"maxProperties":    "must have at most %[2]s entries (got %[1]s)",
}

// translate rewrites one library reason as a short sentence.
func translate(reason string) string {
	if m := reType.FindStringSubmatch(reason); m != nil {
		wants := strings.Split(m[2], " or ")
		for i, w := range wants {
			wants[i] = withArticle(w)
		}
		return fmt.Sprintf("must be %s, not %s", strings.Join(wants, " or "), withArticle(m[1]))
	}
	if m := reRequired.FindStringSubmatch(reason); m != nil {
		return "must have " + requote(m[1])
	}
	if m := reEnum.FindStringSubmatch(reason); m != nil {
		return "value must be one of " + requote(m[1])
	}
	if m := reBound.FindStringSubmatch(reason); m != nil {
		// The library prints numbers with thousands separators ("100,000").
		return fmt.Sprintf(boundWords[m[1]], strings.ReplaceAll(m[2], ",", ""), strings.ReplaceAll(m[3], ",", ""))
	}
	if m := reFormat.FindStringSubmatch(reason); m != nil {
		return fmt.Sprintf("%s is not a valid %s (%s)", requote(m[1]), m[2], m[3])
	}
	if m := reParamEnum.FindStringSubmatch(reason); m != nil {
		values := strings.Split(m[2], ", ")
		for i, s := range values {
			values[i] = strconv.Quote(s)
		}
		return fmt.Sprintf("value %q must be one of %s", m[1], strings.Join(values, ", "))
	}
	if m := reParamType.FindStringSubmatch(reason); m != nil {
		return fmt.Sprintf("%q is not a valid %s", m[1], m[2])
	}
	if m := reCommas.FindStringSubmatch(reason); m != nil {
		return fmt.Sprintf("%q joins values with commas; repeat the parameter once per value instead", m[1])
	}
	if m := reReserved.FindStringSubmatch(reason); m != nil {
		return fmt.Sprintf("%q contains reserved characters that must be percent-encoded", m[1])
	}
	if m := reEncoding.FindStringSubmatch(reason); m != nil {
		return fmt.Sprintf("is not valid %s (%s)", m[1], m[2])
	}
	if reEmptyBody.MatchString(reason) {
		return "is empty, but a JSON body is required"
	}
	return sentence(reason)
}

// withArticle turns a JSON type name into a noun phrase: "an integer".
func withArticle(t string) string {
	switch t {
	case "null":
		return "null"
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}

// requote replaces the single-quoted strings of jsonschema with Go-style
// double-quoted ones, which read better inside a finding.
func requote(s string) string {
	return reQuoted.ReplaceAllStringFunc(s, func(q string) string {
		inner := strings.ReplaceAll(q[1:len(q)-1], `\'`, `'`)
		return strconv.Quote(inner)
	})
}

// sentence trims a message and lower-cases its first letter.
func sentence(s string) string {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "."))
	if s == "" {
		return "is invalid"
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// schemaRoot is the schema a body was validated against, for following the
// keyword locations of failures; nil when unknown.
type schemaRoot = *base.Schema

// bodyFindings turns a body error into one finding per failing field. The
// failures of the branches of one oneOf are folded into a single finding.
func bodyFindings(e *liberrors.ValidationError, root func() schemaRoot) []Finding {
	if len(e.SchemaValidationErrors) == 0 {
		if m := reDecode.FindStringSubmatch(e.Reason); m != nil {
			return []Finding{{Field: "body", Message: "is not valid JSON: " + m[1]}}
		}
		return []Finding{{Field: "body", Message: translate(e.Reason)}}
	}
	type group struct {
		field, location string
		missing         []string
		other           []string
	}
	var out []Finding
	var groups []*group
	byKey := map[string]*group{}
	for _, f := range e.SchemaValidationErrors {
		field := bodyField(f.InstancePath)
		if m := reOneOfBranch.FindStringSubmatch(f.KeywordLocation); m != nil {
			key := field + "\x00" + m[1]
			g := byKey[key]
			if g == nil {
				g = &group{field: field, location: m[1]}
				byKey[key] = g
				groups = append(groups, g)
			}
			if r := reRequired.FindStringSubmatch(f.Reason); r != nil {
				g.missing = append(g.missing, unquoteList(r[1])...)
			} else {
				g.other = append(g.other, translate(f.Reason))
			}
			continue
		}
		if r := reRequired.FindStringSubmatch(f.Reason); r != nil {
			for _, name := range unquoteList(r[1]) {
				out = append(out, Finding{Field: bodyField(append(append([]string(nil), f.InstancePath...), name)), Message: "is required"})
			}
			continue
		}
		if m := reOneOfMany.FindStringSubmatch(f.Reason); m != nil {
			out = append(out, Finding{Field: field, Message: oneOfManyMessage(root(), f.KeywordLocation, m[1], m[2])})
			continue
		}
		out = append(out, Finding{Field: field, Message: translate(f.Reason)})
	}
	for _, g := range groups {
		if exclusive := exclusiveFields(root(), g.location); exclusive != nil && len(g.other) == 0 {
			out = append(out, Finding{Field: g.field, Message: "must set exactly one of " + strings.Join(exclusive, ", ") + " (none is set)"})
			continue
		}
		reasons := g.other
		if len(g.missing) > 0 {
			reasons = append(reasons, "missing "+strings.Join(g.missing, ", "))
		}
		out = append(out, Finding{Field: g.field, Message: "matches none of the allowed shapes (" + strings.Join(reasons, "; ") + ")"})
	}
	return out
}

// oneOfManyMessage explains a value that matched several branches of a oneOf.
func oneOfManyMessage(root schemaRoot, location, first, second string) string {
	exclusive := exclusiveFields(root, location)
	i, _ := strconv.Atoi(first)
	j, _ := strconv.Atoi(second)
	if exclusive != nil && i < len(exclusive) && j < len(exclusive) {
		return fmt.Sprintf("sets both %s and %s; exactly one of %s is allowed",
			exclusive[i], exclusive[j], strings.Join(exclusive, ", "))
	}
	return fmt.Sprintf("matches more than one of the allowed shapes (alternatives %d and %d); exactly one must match", i+1, j+1)
}

// bodyField renders JSON instance path segments as "body.a.b[0].c".
func bodyField(segments []string) string {
	return "body" + strings.TrimPrefix(jsonPath(segments), "$")
}

// jsonPath renders JSON pointer segments as "$.a.b[0]['c d']", undoing the
// pointer escapes (~1, ~0) the library leaves in them.
func jsonPath(segments []string) string {
	if len(segments) == 0 {
		return "$"
	}
	plain := make([]string, len(segments))
	for i, s := range segments {
		plain[i] = unescapePointer(s)
	}
	return helpers.ExtractJSONPathFromInstanceLocation(plain)
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// unquoteList splits "'a', 'b'" into a and b.
func unquoteList(s string) []string {
	var names []string
	for _, m := range reQuoted.FindAllStringSubmatch(s, -1) {
		names = append(names, strings.ReplaceAll(m[1], `\'`, `'`))
	}
	return names
}

// exclusiveFields follows a keyword location ending in "/oneOf" from root.
// When every branch of that oneOf only requires one property (the "exactly one
// of these fields" idiom of MCPServerConfig) it returns those properties in
// branch order; otherwise nil.
func exclusiveFields(root schemaRoot, location string) []string {
	s := walkSchema(root, strings.TrimSuffix(location, "/oneOf"))
	if s == nil || len(s.OneOf) == 0 {
		return nil
	}
	names := make([]string, 0, len(s.OneOf))
	for _, proxy := range s.OneOf {
		branch := proxy.Schema()
		if branch == nil || len(branch.Required) != 1 {
			return nil
		}
		names = append(names, branch.Required[0])
	}
	return names
}

// walkSchema follows a JSON pointer of schema keywords ("/properties/config/
// $ref/properties/mcp_servers/additionalProperties") through the model. $ref
// segments are skipped: the model's proxies resolve references already.
func walkSchema(s *base.Schema, pointer string) *base.Schema {
	segs := strings.Split(strings.Trim(pointer, "/"), "/")
	for i := 0; s != nil && i < len(segs); i++ {
		seg := unescapePointer(segs[i])
		switch seg {
		case "", "$ref":
		case "properties":
			if i+1 >= len(segs) || s.Properties == nil {
				return nil
			}
			i++
			s = s.Properties.GetOrZero(unescapePointer(segs[i])).Schema()
		case "items":
			if s.Items == nil || !s.Items.IsA() {
				return nil
			}
			s = s.Items.A.Schema()
		case "additionalProperties":
			if s.AdditionalProperties == nil || !s.AdditionalProperties.IsA() {
				return nil
			}
			s = s.AdditionalProperties.A.Schema()
		case "oneOf", "anyOf", "allOf":
			list := map[string][]*base.SchemaProxy{"oneOf": s.OneOf, "anyOf": s.AnyOf, "allOf": s.AllOf}[seg]
			if i+1 >= len(segs) {
				return nil
			}
			i++
			n, err := strconv.Atoi(segs[i])
			if err != nil || n >= len(list) {
				return nil
			}
			s = list[n].Schema()
		default:
			return nil
		}
	}
	return s
}

// requestSchema returns the schema of the request body of route for r's
// content type.
func requestSchema(r *http.Request, route *router.Route) schemaRoot {
	if route.Operation == nil || route.Operation.RequestBody == nil {
		return nil
	}
	return mediaSchema(route.Operation.RequestBody.Content, r.Header.Get("Content-Type"))
}

// responseSchema returns the schema documented for resp's status and content
// type.
func responseSchema(resp *http.Response, route *router.Route) schemaRoot {
	documented := responseFor(route.Operation, resp.StatusCode)
	if documented == nil {
		return nil
	}
	return mediaSchema(documented.Content, resp.Header.Get("Content-Type"))
}

func mediaSchema(content *orderedmap.Map[string, *v3.MediaType], contentType string) schemaRoot {
	media, ok := helpers.FindMediaType(content, contentType)
	if !ok || media == nil || media.Schema == nil {
		return nil
	}
	return media.Schema.Schema()
}

// responseFor returns the response documented for status: the exact code,
// then the "4XX" range, then default.
func responseFor(op *v3.Operation, status int) *v3.Response {
	if op == nil || op.Responses == nil {
		return nil
	}
	if op.Responses.Codes != nil {
		if r := op.Responses.Codes.GetOrZero(strconv.Itoa(status)); r != nil {
			return r
		}
		if r := op.Responses.Codes.GetOrZero(fmt.Sprintf("%dXX", status/100)); r != nil {
			return r
		}
	}
	return op.Responses.Default
}

// mediaTypesOf lists the keys of a content map.
func mediaTypesOf(content *orderedmap.Map[string, *v3.MediaType]) []string {
	var types []string
	if content != nil {
		for pair := content.First(); pair != nil; pair = pair.Next() {
			types = append(types, pair.Key())
		}
	}
	if len(types) == 0 {
		return []string{"no body"}
	}
	return types
}
