// Package drift finds what live traffic shows that the OpenAPI document
// does not declare: an operation it lacks, a query parameter, a member of a
// request or an answer, a value outside a declared enum, a status or a
// content type it does not list. Undocumented is not wrong (the document
// leaves its objects open), so drift is a list of its own, beside the
// violations the validator finds.
//
// Doc reads the document once; Look walks one exchange against it. A
// Ledger keeps the facts seen, counted, with when first and last and one
// redacted example, and writes them as an OpenAPI Overlay that, applied,
// declares them. A Profile keeps the shape of every answer, documented or
// not, so that two servers given the same traffic can be compared
// (Compare) without their ids and times, which always differ.
package drift

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi-validator/router"
	"github.com/pb33f/libopenapi/datamodel"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/agentruns/agentruns/openapi"
)

// Doc is an OpenAPI document read for finding drift. Safe for concurrent
// use.
type Doc struct {
	model  *v3.Document
	router router.Router
	// templates are the document's path templates, split, for naming the
	// template of a path it lacks (template.go).
	templates [][]string
	enums     sync.Map // *base.Schema -> map[string]bool, the JSON of each enum value
}

// New reads a document given as YAML or JSON.
func New(doc []byte) (*Doc, error) {
	cfg := datamodel.NewDocumentConfiguration()
	cfg.Logger = slog.New(slog.DiscardHandler)
	// A conversation step holds its sub-steps, an array of itself.
	cfg.IgnoreArrayCircularReferences = true
	parsed, err := libopenapi.NewDocumentWithConfiguration(doc, cfg)
	if err != nil {
		return nil, fmt.Errorf("drift: read document: %w", err)
	}
	built, err := parsed.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("drift: build model: %w", err)
	}
	if built == nil {
		return nil, errors.New("drift: the document is not OpenAPI 3")
	}
	d := &Doc{model: &built.Model, router: router.NewRouter(&built.Model, router.WithPathOnlyMatching())}
	if d.model.Paths != nil && d.model.Paths.PathItems != nil {
		for p := d.model.Paths.PathItems.First(); p != nil; p = p.Next() {
			d.templates = append(d.templates, strings.Split(strings.Trim(p.Key(), "/"), "/"))
		}
	}
	return d, nil
}

var embedded = sync.OnceValues(func() (*Doc, error) { return New(openapi.Document) })

// Embedded is the project's own document (openapi/openapi.yaml), read once.
func Embedded() (*Doc, error) { return embedded() }

// route finds the operation of method and path (without the version
// prefix); template is "" when the document has no such path, and op nil
// when it has the path but not the method.
func (d *Doc) route(method, path string) (template string, item *v3.PathItem, op *v3.Operation) {
	r := &http.Request{Method: method, URL: &url.URL{Path: path}, Host: "upstream"}
	found, err := d.router.FindRoute(r)
	switch {
	case err == nil && found != nil:
		return found.Path, found.PathItem, found.Operation
	case errors.Is(err, router.ErrMethodNotAllowed) && found != nil:
		return found.Path, found.PathItem, nil
	}
	return "", nil, nil
}
