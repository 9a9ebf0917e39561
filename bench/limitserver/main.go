// Command limitserver is the yardstick of `make bench`: the least a Go
// net/http server can do to answer the benchmarked endpoints. It keeps no
// state, checks nothing and returns fixed JSON bodies of the same size as the
// mock's answers (one run, a page of 20 runs or of one, a create answer), so
// the mock's figures can be read against what Go's HTTP server does on the
// same machine under the same load.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// runJSON is a run as the mock shows one (a finished run with artifacts).
const runJSON = `{"run_id":"f29d0da9-953f-48f1-a09f-76b5a170b338","task_id":"f29d0da9-953f-48f1-a09f-76b5a170b338","title":"Fix flaky login test","state":"SUCCEEDED","prompt":"The login integration test fails about one run in ten on CI. Find the race and fix it.","created_at":"2026-11-15T19:34:59.223Z","updated_at":"2026-11-15T19:49:59.223Z","started_at":"2026-11-15T19:38:44.223Z","source":"API","session_id":"3d56b3cb-f7de-592b-b528-643b78279ce3","session_link":"https://app.warp.dev/session/3d56b3cb-f7de-592b-b528-643b78279ce3","creator":{"type":"user","uid":"user-alice","display_name":"Alice Archer","email":"alice@acme.example","photo_url":"https://avatars.example.com/alice.png"},"agent_config":{"name":"triage","model_id":"auto","base_prompt":"You are a careful engineer. Keep changes small and explain them.","environment_id":"env-web-app"},"scope":{"type":"Team","uid":"team-acme"},"artifacts":[{"artifact_type":"PULL_REQUEST","created_at":"2026-11-15T19:49:59.223Z","data":{"branch":"agent/f29d0da9","url":"https://git.example.com/pulls/f29d0da9"}},{"artifact_type":"PLAN","created_at":"2026-11-15T19:49:59.223Z","data":{"document_uid":"doc-f29d0da9","title":"Plan: Fix flaky login test"}}]}`

// pageRunJSON is a run without artifacts, the size of an average listed run.
const pageRunJSON = `{"run_id":"0becd7b0-3898-4190-b9eb-dacc0cb1e29c","task_id":"0becd7b0-3898-4190-b9eb-dacc0cb1e29c","title":"Bump minor dependencies","state":"CLAIMED","prompt":"Update all minor and patch versions of our Go dependencies and make sure the tests still pass.","created_at":"2026-11-22T18:26:59.223Z","updated_at":"2026-11-22T18:33:59.223Z","source":"API","session_id":"49d4949e-3096-55f6-a70f-ba062d8cd692","session_link":"https://app.warp.dev/session/49d4949e-3096-55f6-a70f-ba062d8cd692","creator":{"type":"user","uid":"user-bob","display_name":"Bob Baker","email":"bob@acme.example"},"agent_config":{"name":"dependency-bumps","model_id":"claude-4-sonnet","environment_id":"env-backend","skill_spec":"acme/agent-skills:dependency-bumps"},"scope":{"type":"User","uid":"user-bob"}}`

const createdJSON = `{"run_id":"173248bc-93dd-4bb3-bbd0-5858b77ae82e","task_id":"173248bc-93dd-4bb3-bbd0-5858b77ae82e","state":"QUEUED"}`

func page(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"runs":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(pageRunJSON)
	}
	b.WriteString(`],"page_info":{"has_next_page":true,"next_cursor":"eyJnIjoxLCJoIjoxMjM0NTY3ODkwLCJzIjo3fQ.c2lnbmF0dXJlMTIz"}}`)
	return b.Bytes()
}

func handler() http.Handler {
	one, list, short, created := []byte(runJSON), page(20), page(1), []byte(createdJSON)
	reply := func(w http.ResponseWriter, body []byte) {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		_, _ = w.Write(body)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost:
			_, _ = io.Copy(io.Discard, r.Body) // read the request as any server must
			reply(w, created)
		case strings.HasPrefix(r.URL.Path, "/agent/runs/"):
			reply(w, one)
		case r.URL.RawQuery == "limit=1":
			reply(w, short)
		default:
			reply(w, list)
		}
	})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:4020", "address to listen on (loopback only)")
	flag.Parse()
	if !strings.HasPrefix(*addr, "127.") && !strings.HasPrefix(*addr, "localhost:") && !strings.HasPrefix(*addr, "[::1]:") {
		fmt.Fprintln(os.Stderr, "limitserver: listen on a loopback address only")
		os.Exit(2)
	}
	log.Fatal(http.ListenAndServe(*addr, handler()))
}
