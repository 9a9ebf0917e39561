package htmlreport

import (
	"strings"
	"time"
)

// Drift is what live traffic showed that the document does not say: an
// operation, a parameter, a field, an enum value, a status or a content
// type it lacks. It is not a failure (the document allows more than it
// lists); the page shows it as its own list, next to the outcomes.
type Drift struct {
	Facts []DriftFact
	// Distinct counts the facts seen; Dropped, those of them not kept
	// past the bound (counted, not listed).
	Distinct, Dropped int
}

// DriftFact is one thing the document does not say, as often as it was
// seen.
type DriftFact struct {
	// Kind is operation, query-parameter, request-field, response-field,
	// enum-value, status or content-type.
	Kind      string
	Operation string // method and path template
	// Status is the answer's; 0 for a fact about requests.
	Status      int
	ContentType string
	Location    string // "body.runs[].x", "query.NAME"
	// Value is the JSON of a value outside an enum; Types the JSON types
	// seen.
	Value               string
	Types               []string
	Count               int
	FirstSeen, LastSeen time.Time
	// Example is one instance, redacted and cut short.
	Example string
}

// Seen is the fact's value outside its enum, the content type a
// content-type fact is about, and the JSON types seen, as one cell shows
// them.
func (f DriftFact) Seen() string {
	var parts []string
	if f.Value != "" {
		parts = append(parts, f.Value)
	}
	if f.Kind == "content-type" && f.ContentType != "" {
		parts = append(parts, f.ContentType)
	}
	if len(f.Types) > 0 {
		parts = append(parts, strings.Join(f.Types, " | "))
	}
	return strings.Join(parts, " · ")
}
