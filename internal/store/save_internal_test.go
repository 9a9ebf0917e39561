package store

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSaveKnowsEveryField fails when a record or a mock session gains a
// field, until save.go is taught about it and the field is listed here.
// Run and Timeline are saved as they are (their JSON tags), so a field
// without a tag, or one tagged "-", must be one that is derived on Load.
func TestSaveKnowsEveryField(t *testing.T) {
	for _, tc := range []struct {
		v     any
		known []string
	}{
		{(*Run)(nil), []string{"ID", "Seq", "Title", "Prompt", "Source", "Creator", "Team", "TeamScope", "CreatedAt", "Config",
			"FromSkill", "ConversationID", "Schedule", "ArtifactTypes", "TriggerURL", "ParentRunID", "AgentIdentityUID", "Interactive", "AgentSession", "Timeline", "FateMsg", "ForcedMsg", "ForcedState", "Logged"}},
		{(*Timeline)(nil), []string{"Anchor", "AnchorState", "Steps", "Final", "StartedAt", "WasClaimed"}},
		{(*Session)(nil), []string{"st", "lastUsed", "fates", "attachment", "mu", "clock", "runs", "byID", "byName", "generation", "nextSeq", "createdBy",
			"schedules", "nextScheduleSeq", "dueAt", "events", "watched",
			"catalogueAt", "agents", "agentByUID", "agentByKey", "messages", "messageByID",
			"artifactByUID"}},
		{(*ScheduleRecord)(nil), []string{"ID", "Seq", "Name", "Cron", "Prompt", "Enabled", "Config", "FromSkill", "Owner", "UpdatedBy",
			"Team", "TeamScope", "CreatedAt", "UpdatedAt", "LastRan", "NextTick", "LastSpawnError", "sched"}},
		{(*Identity)(nil), []string{"UID", "Team", "Name", "Default", "CreatedAt", "KeyHashes", "principal"}},
		{(*Message)(nil), []string{"ID", "Team", "SenderRunID", "RecipientID", "Subject", "Body", "SentAt", "DeliveredAt", "ReadAt"}},
	} {
		typ := reflect.TypeOf(tc.v).Elem()
		var fields []string
		for i := 0; i < typ.NumField(); i++ {
			fields = append(fields, typ.Field(i).Name)
		}
		assert.ElementsMatch(t, tc.known, fields, "%s changed: teach save.go (Save and Load) about the new field, then list it here", typ.Name())
	}
	// Every stored field of a run is written, under a name of its own.
	typ := reflect.TypeOf(Run{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if f.Tag.Get("json") == "" {
			t.Errorf("Run.%s has no json tag: the save would name it after the Go field", f.Name)
		}
	}
}
