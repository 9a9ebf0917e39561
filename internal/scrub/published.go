package scrub

import (
	"sync"

	"github.com/agentruns/agentruns/openapi"
)

// The values the OpenAPI document lists for a field (its enums) are
// published: whatever the field's name, such a value is no secret, and
// replacing it would give the mock a value the document does not allow.

var (
	enumsOnce sync.Once
	enums     map[string]map[string]bool // field name -> the values the document lists for it
)

// published reports whether the document lists value among the values of
// some field called name.
func published(name, value string) bool {
	enumsOnce.Do(func() {
		if m, err := openapi.Embedded(); err == nil {
			enums = m.PropertyEnums()
		}
	})
	return enums[name][value]
}
