package mockserver

import "encoding/json"

// Conversation returns the conversation a run belongs to as the API shows
// it (its JSON, decoded), whichever team owns the run: an error wrapping
// the store's ErrNoConversation before a worker has claimed the run.
func (c *Session) Conversation(runID string) (Conversation, error) {
	cv, err := c.ms.ConversationOfRun(runID)
	if err != nil {
		return Conversation{}, err
	}
	raw, err := json.Marshal(conversationJSON(cv))
	if err != nil {
		return Conversation{}, err
	}
	var decoded Conversation
	err = json.Unmarshal(raw, &decoded)
	return decoded, err
}
