package mockserver

// Models over HTTP: the fixtures' models, the same for every caller.

// ListModelsResponse answers GET /agent/models.
type ListModelsResponse struct {
	DefaultModelID string      `json:"default_model_id"`
	Models         []ModelInfo `json:"models"`
}

// ModelInfo is a model as the API shows it.
type ModelInfo struct {
	ID              string `json:"id"`
	DisplayName     string `json:"display_name"`
	Provider        string `json:"provider"`
	VisionSupported bool   `json:"vision_supported"`
	Description     string `json:"description,omitempty"`
	ReasoningLevel  string `json:"reasoning_level,omitempty"`
	DisableReason   string `json:"disable_reason,omitempty"`
}

// listModels is GET /agent/models: the fixtures' models, the same for
// every caller.
func (s *Server) listModels(*call) response {
	out := ListModelsResponse{DefaultModelID: s.fixtures.DefaultModelID, Models: make([]ModelInfo, 0, len(s.fixtures.Models))}
	for _, m := range s.fixtures.Models {
		out.Models = append(out.Models, ModelInfo(m))
	}
	return ok(out)
}
