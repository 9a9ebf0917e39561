package steps

import (
	"reflect"
	"testing"
)

// TestScenarioHoldsSharedStateAndRooms keeps the per-scenario state in
// rooms: the scenario's own fields are what the steps of every resource
// share; anything one resource keeps goes in that resource's room, a
// struct declared in its steps file.
func TestScenarioHoldsSharedStateAndRooms(t *testing.T) {
	shared := map[string]bool{
		"suite": true, "api": true, "label": true, "unknownID": true, "skipReason": true,
		"cache": true, "last": true, "mine": true, "current": true, "fate": true,
		// What the scenario is called and the runs it needs, shares or
		// makes for others (runbook.go, shares): every resource's runs.
		"name": true, "need": true, "share": true, "shareMaker": true,
	}
	typ := reflect.TypeFor[scenario]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if shared[f.Name] {
			continue
		}
		if f.Type.Kind() != reflect.Struct {
			t.Errorf("scenario.%s (%s) is neither state every resource shares nor a room: put it in its resource's room", f.Name, f.Type)
		}
	}
}
