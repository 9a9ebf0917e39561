// Package store is the mock's memory: its mock sessions (the isolated
// worlds a client picks with the X-Mock-Session header), and in each one its
// runs, their indexes, its clock, the timelines runs' states derive from, and
// the fate rules that decide how new runs end; plus saving all of it to the
// state file and loading it back.
//
// It speaks the API's language but not HTTP's: it returns its own values
// (Run records, View, Page) and sentinel errors to test with errors.Is, and
// knows nothing of requests, problems, status codes or how a cursor is
// encoded. The HTTP layer (package mockserver) translates, in one place per
// concern. Every mutation counts itself (Store.Changes), so a saver sees
// changes made over HTTP and through the Go API alike.
//
// Words used here, one meaning each:
//   - mock session (type Session): one isolated world of the mock. Not the
//     agent session a run shows as session_id and session_link, which is
//     Run.AgentSession.
//   - state: a run's state (State, the API's RunState). The document written
//     to the state file is a save (Save, Load, ErrBadSave); a run's stored
//     form is its Run record, the same in memory and in the save.
//
// # Adding a resource
//
// A resource (schedules, events, environments, ...) gets one file here,
// named after it like runs.go:
//
//  1. its record type, with JSON tags: the same struct is kept in memory and
//     written to the save, so a new field is one edit here plus its encoding
//     in the HTTP layer;
//  2. its fields on Session (the records and any index), emptied and seeded
//     from the fixtures in Session.resetLocked, and copied in saveLocked and
//     restoreSession (save.go; TestSaveKnowsEveryField fails until they are);
//  3. its operations as Session methods that take the lock, return records
//     or views by value, fail with sentinel errors declared next to them, and
//     call s.changed() after every mutation.
//
// Then the HTTP side: a mockserver/<resource>_handlers.go and its entries in
// the routing table (mockserver/routes.go).
package store
