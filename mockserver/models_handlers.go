package mockserver

import "github.com/agentruns/agentruns/fixtures"

// Models over HTTP: the fixtures' models, the same for every caller.

// ListModelsResponse answers GET /agent/models.
type ListModelsResponse struct {
	DefaultModelID string      `json:"default_model_id"`
	Models         []ModelInfo `json:"models"`
}

// ModelInfo is a model as the API shows it: the fixtures' own type, whose
// JSON names are the API's.
type ModelInfo = fixtures.Model

// listModels is GET /agent/models: the fixtures' models, the same for
// every caller.
func (s *Server) listModels(*call) response {
	models := s.fixtures.Models
	if models == nil {
		models = []ModelInfo{} // an empty list, never null
	}
	return ok(ListModelsResponse{DefaultModelID: s.fixtures.DefaultModelID, Models: models})
}
