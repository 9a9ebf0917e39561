package mockserver

import (
	"encoding/json"
	"net/http"
)

// withStatus is an answer with a status other than 200: a 201 with its
// body, or a 204 with none (body nil).
type withStatus struct {
	status int
	body   any
}

func writeWithStatus(w http.ResponseWriter, r *http.Request, v withStatus) {
	if v.body == nil {
		w.WriteHeader(v.status)
		return
	}
	body, err := json.Marshal(v.body)
	if err != nil {
		writeProblem(w, r, errorf(codeInternal, "encoding the response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(v.status)
	_, _ = w.Write(body)
}
