// Package drift finds what live traffic shows that the OpenAPI document
// does not declare: an operation it lacks, a query parameter, a member of a
// request or an answer, a value outside a declared enum, a status or a
// content type it does not list. Undocumented is not wrong (the document
// leaves its objects open), so drift is a list of its own, beside the
// violations the validator finds.
//
// Doc is the document as its model (openapi.Model) reads it, once; Look
// walks one exchange against it. A
// Ledger keeps the facts seen, counted, with when first and last and one
// redacted example, and writes them as an OpenAPI Overlay that, applied,
// declares them. A Profile keeps the shape of every answer, documented or
// not, so that two servers given the same traffic can be compared
// (Compare) without their ids and times, which always differ.
package drift

import (
	"fmt"
	"sync"

	"github.com/agentruns/agentruns/openapi"
)

// Doc is an OpenAPI document read for finding drift: the model of the
// document (openapi.Model), which answers which operation an exchange is
// for and what its schemas declare. Safe for concurrent use.
type Doc struct {
	model *openapi.Model
}

// New reads a document given as YAML or JSON.
func New(doc []byte) (*Doc, error) {
	m, err := openapi.Load(doc)
	if err != nil {
		return nil, fmt.Errorf("drift: %w", err)
	}
	return Of(m), nil
}

// Of is the Doc of a document already read.
func Of(m *openapi.Model) *Doc { return &Doc{model: m} }

var embedded = sync.OnceValues(func() (*Doc, error) {
	m, err := openapi.Embedded()
	if err != nil {
		return nil, err
	}
	return Of(m), nil
})

// Embedded is the project's own document (openapi/openapi.yaml), read once.
func Embedded() (*Doc, error) { return embedded() }
