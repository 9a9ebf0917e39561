package drift

import "github.com/agentruns/agentruns/openapi"

// Apply applies an overlay to a document and returns the document it
// makes (YAML): openapi.ApplyOverlay, where the overlay engine is. An
// action whose target matches nothing in the document is an error: the
// overlay was written for another document.
func Apply(doc, overlay []byte) ([]byte, error) { return openapi.ApplyOverlay(doc, overlay) }
