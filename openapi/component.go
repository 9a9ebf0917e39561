package openapi

import (
	"fmt"
	"strings"

	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/schema_validation"
)

// CheckComponent says why value (JSON) is not a value of the component
// schema #/components/schemas/<component>, with formats asserted as the
// Validator asserts them; nil when it is one.
func (m *Model) CheckComponent(component string, value []byte) error {
	n := m.Component(component)
	if n == nil {
		return fmt.Errorf("the document has no component schema %q", component)
	}
	v := schema_validation.NewSchemaValidator(config.WithFormatAssertions(), config.WithContentAssertions())
	ok, errs := v.ValidateSchemaBytesWithVersion(n.s, value, helpers.VersionToFloat(m.model.Version))
	if ok {
		return nil
	}
	var lines []string
	for _, e := range errs {
		if len(e.SchemaValidationErrors) == 0 {
			lines = append(lines, sentence(e.Message))
		}
		for _, f := range e.SchemaValidationErrors {
			lines = append(lines, jsonPath(f.InstancePath)+": "+translate(f.Reason))
		}
	}
	if len(lines) == 0 {
		lines = []string{"does not fit " + component}
	}
	return fmt.Errorf("%s", strings.Join(lines, "; "))
}
