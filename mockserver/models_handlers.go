package mockserver

import "github.com/agentruns/agentruns/fixtures"

// Models over HTTP: the fixtures' models, the same for every caller.

// ListModelsResponse answers GET /agent/models.
type ListModelsResponse struct {
	DefaultModelID string      `json:"default_model_id"`
	Models         []ModelInfo `json:"models"`
}

// ModelInfo is a model as the API shows it: the fixtures' own type, whose
// JSON names are the API's, with the fixture's extra members written where
// their parents are rather than under "extra".
type ModelInfo fixtures.Model

// MarshalJSON writes the model's fields, then its extra members.
func (m ModelInfo) MarshalJSON() ([]byte, error) {
	extra := m.Extra
	m.Extra = nil
	return marshalWithExtra(fixtures.Model(m), extra)
}

// listModels is GET /agent/models: the fixtures' models, the same for
// every caller.
func (s *Server) listModels(*call) response {
	models := make([]ModelInfo, len(s.fixtures.Models)) // an empty list, never null
	for i, m := range s.fixtures.Models {
		models[i] = ModelInfo(m)
	}
	return ok(ListModelsResponse{DefaultModelID: s.fixtures.DefaultModelID, Models: models})
}
