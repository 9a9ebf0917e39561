package mockserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/jarcoal/httpmock"
)

// A Go client test can run the mock in-process: no listener, no port. The
// session controls move its clock without HTTP.
func Example_inProcess() {
	mock, err := mockserver.New(mockserver.Options{ClockMode: mockserver.VirtualClock})
	if err != nil {
		panic(err)
	}
	client := mock.Client() // or &http.Client{Transport: mock.Transport()}

	req, _ := http.NewRequest("POST", "http://agentruns.test/agent/run", strings.NewReader(`{"prompt": "Fix the build"}`))
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	var created struct{ RunID, State string }
	_ = json.NewDecoder(resp.Body).Decode(&struct {
		RunID *string `json:"run_id"`
		State *string `json:"state"`
	}{&created.RunID, &created.State})
	resp.Body.Close()
	fmt.Println("created:", created.State)

	if _, err := mock.DefaultSession().Advance(5 * time.Minute); err != nil {
		panic(err)
	}
	req, _ = http.NewRequest("GET", "http://agentruns.test/agent/runs/"+created.RunID, nil)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	resp, err = client.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var run mockserver.RunItem
	_ = json.NewDecoder(resp.Body).Decode(&run)
	fmt.Println("five minutes later:", run.State)
	// Output:
	// created: QUEUED
	// five minutes later: SUCCEEDED
}

// The mock can also answer through an httpmock transport injected into the
// client under test, without touching http.DefaultTransport.
func Example_httpmock() {
	mock, err := mockserver.New(mockserver.Options{})
	if err != nil {
		panic(err)
	}
	mt := httpmock.NewMockTransport()
	mock.RegisterOn(mt, "https://api.example.test/api/v1")
	client := &http.Client{Transport: mt}

	req, _ := http.NewRequest("GET", "https://api.example.test/api/v1/agent/runs/no-such-run", nil)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	// Output: 404 application/problem+json
}

// A Go test decides how the runs its client creates will end, without
// headers: here every run of the session fails for lack of credits.
func ExampleSession_AddFate() {
	mock, err := mockserver.New(mockserver.Options{ClockMode: mockserver.VirtualClock})
	if err != nil {
		panic(err)
	}
	session := mock.DefaultSession()
	if _, err := session.AddFate(mockserver.FateRule{State: mockserver.Failed, ErrorCode: "insufficient_credits", Step: "1s"}); err != nil {
		panic(err)
	}
	req, _ := http.NewRequest("POST", "http://agentruns.test/agent/runs", strings.NewReader(`{"prompt": "Fix the build"}`))
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	req.Header.Set("Content-Type", "application/json")
	resp, err := mock.Client().Do(req)
	if err != nil {
		panic(err)
	}
	var created mockserver.RunAgentResponse
	_ = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()

	_, _ = session.Advance(time.Minute)
	run, err := session.Run(created.RunID)
	if err != nil {
		panic(err)
	}
	fmt.Println(run.State, run.StatusMessage.ErrorCode)
	// Output: FAILED insufficient_credits
}
