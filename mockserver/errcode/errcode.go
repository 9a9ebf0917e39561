// Package errcode is the API's table of error codes: the name a failure
// carries in a problem's type URI and in a failed run's
// status_message.error_code, with the HTTP status, title and retryability
// that go with it. The store reads it for run status messages, the HTTP
// layer for problems; it imports nothing of either.
package errcode

// Code names a kind of failure.
type Code string

// The codes the mock itself answers with.
const (
	InvalidRequest       Code = "invalid_request"
	AuthRequired         Code = "authentication_required"
	NotAuthorized        Code = "not_authorized"
	NotFound             Code = "resource_not_found"
	Conflict             Code = "conflict"
	NotSupported         Code = "operation_not_supported"
	Unavailable          Code = "resource_unavailable"
	Internal             Code = "internal_error"
	MethodNotAllowed     Code = "method_not_allowed"
	PayloadTooLarge      Code = "payload_too_large"
	UnsupportedMediaType Code = "unsupported_media_type"
)

// Info is what an error code means over HTTP.
type Info struct {
	Status    int
	Title     string
	Retryable bool
}

// table is the one table from error codes to statuses. The first group is
// the real service's; the last three name statuses it leaves to its gateway,
// which the mock answers itself.
var table = map[Code]Info{
	InvalidRequest:                     {400, "Invalid request", false},
	"integration_not_configured":       {400, "Integration not configured", false},
	AuthRequired:                       {401, "Authentication required", false},
	"external_authentication_required": {401, "External authentication required", false},
	NotAuthorized:                      {403, "Not authorized", false},
	"insufficient_credits":             {403, "Insufficient credits", false},
	"feature_not_available":            {403, "Feature not available", false},
	"budget_exceeded":                  {403, "Budget exceeded", false},
	"integration_disabled":             {403, "Integration disabled", false},
	"content_policy_violation":         {403, "Content policy violation", false},
	NotFound:                           {404, "Resource not found", false},
	Conflict:                           {409, "Conflict", true},
	NotSupported:                       {422, "Operation not supported", false},
	Unavailable:                        {429, "Resource unavailable", true},
	Internal:                           {500, "Internal error", true},
	"environment_setup_failed":         {500, "Environment setup failed", false},
	MethodNotAllowed:                   {405, "Method not allowed", false},
	PayloadTooLarge:                    {413, "Payload too large", false},
	UnsupportedMediaType:               {415, "Unsupported media type", false},
}

// Lookup returns what c means; ok is false for a code the API does not have.
func Lookup(c Code) (Info, bool) { i, ok := table[c]; return i, ok }

// Known reports whether c is one of the API's error codes.
func Known(c string) bool { _, ok := table[Code(c)]; return ok }

// Retryable reports whether a failure with code c is worth retrying.
func Retryable(c string) bool { return table[Code(c)].Retryable }

// Gateway lists the codes the mock answers for its own gateway's statuses;
// the real service's document does not list them.
var Gateway = []Code{MethodNotAllowed, PayloadTooLarge, UnsupportedMediaType}

// All returns every code, in no particular order.
func All() []Code {
	out := make([]Code, 0, len(table))
	for c := range table {
		out = append(out, c)
	}
	return out
}

// platform holds the codes of failures on the platform's side. The service
// ends a run that stops for one of them in ERROR, and a run that stops for
// any other code (the caller's side: a bad request, no credits, an
// environment whose setup failed) in FAILED.
var platform = map[Code]bool{AuthRequired: true, Unavailable: true, Internal: true}

// EndState is the state a run that stops with code c ends in: "ERROR" for
// the platform's failures, "FAILED" for the caller's.
func EndState(c string) string {
	if platform[Code(c)] {
		return "ERROR"
	}
	return "FAILED"
}
