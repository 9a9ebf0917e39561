// Command limitserver is the yardstick of `make bench`: the least a Go
// net/http server can do to answer the benchmarked endpoints. It keeps no
// state, checks nothing and returns fixed JSON bodies of the same size as the
// mock's answers (one run, a page of 20 runs or of one, a create answer, a
// cancel, an events poll, a schedule created and deleted; make bench gives
// it the mock's own answers to the reads, --bodies), so
// the mock's figures can be read against what Go's HTTP server does on the
// same machine under the same load.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// runJSON is a run as the mock shows one (a finished run with artifacts).
const runJSON = `{"run_id":"f29d0da9-953f-48f1-a09f-76b5a170b338","task_id":"f29d0da9-953f-48f1-a09f-76b5a170b338","title":"Fix flaky login test","state":"SUCCEEDED","prompt":"The login integration test fails about one run in ten on CI. Find the race and fix it.","created_at":"2026-11-15T19:34:59.223Z","updated_at":"2026-11-15T19:49:59.223Z","started_at":"2026-11-15T19:38:44.223Z","source":"API","session_id":"3d56b3cb-f7de-592b-b528-643b78279ce3","session_link":"https://app.warp.dev/session/3d56b3cb-f7de-592b-b528-643b78279ce3","creator":{"type":"user","uid":"user-alice","display_name":"Alice Archer","email":"alice@acme.example","photo_url":"https://avatars.example.com/alice.png"},"agent_config":{"name":"triage","model_id":"auto","base_prompt":"You are a careful engineer. Keep changes small and explain them.","environment_id":"env-web-app"},"scope":{"type":"Team","uid":"team-acme"},"artifacts":[{"artifact_type":"PULL_REQUEST","created_at":"2026-11-15T19:49:59.223Z","data":{"branch":"agent/f29d0da9","url":"https://git.example.com/pulls/f29d0da9"}},{"artifact_type":"PLAN","created_at":"2026-11-15T19:49:59.223Z","data":{"document_uid":"doc-f29d0da9","title":"Plan: Fix flaky login test"}}]}`

// pageRunJSON is a run without artifacts, the size of an average listed run.
const pageRunJSON = `{"run_id":"0becd7b0-3898-4190-b9eb-dacc0cb1e29c","task_id":"0becd7b0-3898-4190-b9eb-dacc0cb1e29c","title":"Bump minor dependencies","state":"CLAIMED","prompt":"Update all minor and patch versions of our Go dependencies and make sure the tests still pass.","created_at":"2026-11-22T18:26:59.223Z","updated_at":"2026-11-22T18:33:59.223Z","source":"API","session_id":"49d4949e-3096-55f6-a70f-ba062d8cd692","session_link":"https://app.warp.dev/session/49d4949e-3096-55f6-a70f-ba062d8cd692","creator":{"type":"user","uid":"user-bob","display_name":"Bob Baker","email":"bob@acme.example"},"agent_config":{"name":"dependency-bumps","model_id":"claude-4-sonnet","environment_id":"env-backend","skill_spec":"acme/agent-skills:dependency-bumps"},"scope":{"type":"User","uid":"user-bob"}}`

const createdJSON = `{"run_id":"173248bc-93dd-4bb3-bbd0-5858b77ae82e","task_id":"173248bc-93dd-4bb3-bbd0-5858b77ae82e","state":"QUEUED"}`

// cancelledJSON answers a cancel: the run's id.
const cancelledJSON = `"173248bc-93dd-4bb3-bbd0-5858b77ae82e"`

// eventsJSON answers an events poll: the two events of a finished run.
const eventsJSON = `[{"event_type":"run_in_progress","run_id":"f29d0da9-953f-48f1-a09f-76b5a170b338","ref_id":null,"execution_id":null,"occurred_at":"2026-11-17T13:35:23.651Z","sequence":1},{"event_type":"run_succeeded","run_id":"f29d0da9-953f-48f1-a09f-76b5a170b338","ref_id":null,"execution_id":null,"occurred_at":"2026-11-17T13:46:38.651Z","sequence":2}]`

// scheduleJSON answers a schedule create (201), deletedJSON its delete.
const scheduleJSON = `{"id":"sch_b8196ed821194421","name":"nightly-triage","cron_schedule":"0 3 * * *","enabled":true,"prompt":"Triage the issues opened since yesterday and label them.","last_spawn_error":null,"agent_config":{"name":"triage","model_id":"auto","environment_id":"env-web-app"},"environment":{"name":"Web app (Node 20)","description":"The storefront and its end-to-end tests.","docker_image":"node:20-bookworm","github_repos":[{"owner":"acme","repo":"web-app"},{"owner":"acme","repo":"agent-skills"}]},"created_at":"2026-11-24T12:40:10.737Z","updated_at":"2026-11-24T12:40:10.737Z","created_by":{"type":"user","uid":"user-alice","display_name":"Alice Archer","email":"alice@acme.example","photo_url":"https://avatars.example.com/alice.png"},"updated_by":{"type":"user","uid":"user-alice","display_name":"Alice Archer","email":"alice@acme.example","photo_url":"https://avatars.example.com/alice.png"},"history":{"last_ran":null,"next_run":"2026-11-25T03:00:00.000Z"},"scope":{"type":"Team","uid":"team-acme"}}`

const deletedJSON = `{"success":true}`

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

// bodies are the answers the limit server gives to the reads.
type bodies struct{ one, list, short, events []byte }

// builtIn are answers of about the size of the mock's.
func builtIn() bodies {
	return bodies{one: []byte(runJSON), list: page(20), short: page(1), events: []byte(eventsJSON)}
}

// readBodies replaces the built-in answers with those of dir, where
// make bench saves the mock's own answers to the same requests (run.json,
// list20.json, list1.json, events.json), so both servers send the same
// bytes. A file that is not there leaves the built-in answer.
func readBodies(dir string) (bodies, error) {
	b := builtIn()
	for name, dst := range map[string]*[]byte{"run.json": &b.one, "list20.json": &b.list, "list1.json": &b.short, "events.json": &b.events} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return b, err
		case len(data) == 0:
			return b, fmt.Errorf("%s is empty", filepath.Join(dir, name))
		default:
			*dst = data
		}
	}
	return b, nil
}

func handler(b bodies) http.Handler {
	one, list, short, events, created := b.one, b.list, b.short, b.events, []byte(createdJSON)
	cancelled, schedule, deleted := []byte(cancelledJSON), []byte(scheduleJSON), []byte(deletedJSON)
	reply := func(w http.ResponseWriter, status int, body []byte) {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		if status != http.StatusOK {
			w.WriteHeader(status)
		}
		_, _ = w.Write(body)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		switch {
		case r.Method == http.MethodDelete:
			reply(w, http.StatusOK, deleted)
		case r.Method == http.MethodPost && strings.HasSuffix(path, "/cancel"):
			reply(w, http.StatusOK, cancelled)
		case r.Method == http.MethodPost && path == "/agent/schedules":
			_, _ = io.Copy(io.Discard, r.Body) // read the request as any server must
			reply(w, http.StatusCreated, schedule)
		case r.Method == http.MethodPost:
			_, _ = io.Copy(io.Discard, r.Body)
			reply(w, http.StatusOK, created)
		case path == "/agent/events":
			reply(w, http.StatusOK, events)
		case strings.HasPrefix(path, "/agent/runs/"):
			reply(w, http.StatusOK, one)
		case r.URL.RawQuery == "limit=1":
			reply(w, http.StatusOK, short)
		default:
			reply(w, http.StatusOK, list)
		}
	})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:4020", "address to listen on (loopback only)")
	dir := flag.String("bodies", "", "a directory of answers to send instead of the built-in ones: run.json, list20.json, list1.json, events.json")
	flag.Parse()
	if !strings.HasPrefix(*addr, "127.") && !strings.HasPrefix(*addr, "localhost:") && !strings.HasPrefix(*addr, "[::1]:") {
		fmt.Fprintln(os.Stderr, "limitserver: listen on a loopback address only")
		os.Exit(2)
	}
	b := builtIn()
	if *dir != "" {
		var err error
		if b, err = readBodies(*dir); err != nil {
			fmt.Fprintln(os.Stderr, "limitserver:", err)
			os.Exit(2)
		}
	}
	log.Fatal(http.ListenAndServe(*addr, handler(b)))
}
