// Package store is the mock's memory: its mock sessions (the isolated
// worlds a client picks with the X-Mock-Session header), and in each one its
// runs, their indexes, its clock, the timelines runs' states derive from, and
// the fate rules that decide how new runs end; plus saving all of it to the
// state file and loading it back.
//
// It speaks the API's language but not HTTP's: it returns its own values
// (Run records, View, Page) and errors of its own, and knows nothing of
// requests, problems, status codes or how a cursor is encoded. Every error
// it returns is an *Error (errors.go): a Kind (not found, forbidden,
// invalid, conflict, final, unavailable, exhausted, ...) and the message the
// API tells the caller, wrapping an exported sentinel to test with
// errors.Is. The HTTP layer (package mockserver) maps a kind to the API's
// error code in one table. Every mutation counts itself (Store.Changes), so
// a saver sees changes made over HTTP and through the Go API alike.
//
// Words used here, one meaning each:
//   - mock session (type Session): one isolated world of the mock. Not the
//     agent session a run shows as session_id and session_link, which is
//     Run.AgentSession.
//   - state: a run's state (State, the API's RunState). The document written
//     to the state file is a save (Save, Load, ErrBadSave); a run's stored
//     form is its Run record, the same in memory and in the save.
//   - table: one resource's part of a mock session (runTable, ...).
//
// # Adding a resource
//
// A resource (schedules, events, environments, ...) is one file here, named
// after it like runs.go, holding:
//
//  1. its record type, with JSON tags: the same struct is kept in memory and
//     written to the save, so a new field is one edit here plus its encoding
//     in the HTTP layer;
//  2. its table (scheduleTable): the records and indexes, with reset (empty
//     and seed from the fixtures), save and restore, and its part of the
//     save (savedSchedules), whose fields sit beside the other tables' in
//     the mock session's JSON object;
//  3. its errors: sentinels made with sentinel(kind, message), and failures
//     that say more made with because (same kind) or as (another kind);
//  4. its operations as Session methods that take the lock, return records
//     or views by value, and call ms.changed() after every mutation;
//  5. its tests, in <resource>_internal_test.go: a table of its failures
//     (error and kind), and a case in TestSaveAndLoadKeepEachResource.
//
// Elsewhere here, one line each: the table as a field of Session and in
// Session.tables (session.go), and its saved part embedded in savedSession
// (save.go). TestEveryTableKnowsItsFields fails until they are.
//
// Then the HTTP side: a mockserver/<resource>_handlers.go and its entries in
// the routing table (mockserver/routes.go).
package store
