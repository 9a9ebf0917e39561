package rules

import "strconv"

// A poll of GET /agent/events answers the events of the runs asked for "in
// the order of their sequence, which only grows", and an event is a fact:
// polled again, it is the same event with the same sequence.

// EventsInOrder checks one poll's answer: each sequence greater than the
// one before.
func EventsInOrder(events []map[string]any) []Violation {
	for i := 1; i < len(events); i++ {
		a, aok := events[i-1]["sequence"].(float64)
		b, bok := events[i]["sequence"].(float64)
		if aok && bok && b <= a {
			return []Violation{{Rule: EventsOrdered, Field: at("body", i) + ".sequence", RunID: str(events[i]["run_id"]),
				Expected: "a sequence greater than " + num(a) + " (the event before)", Got: num(b)}}
		}
	}
	return nil
}

// EventBySequence is what names an event in the log: its run and sequence.
func EventBySequence(e map[string]any) (string, bool) {
	seq, ok := e["sequence"].(float64)
	if !ok {
		return "", false
	}
	return str(e["run_id"]) + "#" + num(seq), true
}

// EventByFact is what an event says happened: its run, type and instant.
// The same fact polled again must keep its sequence.
func EventByFact(e map[string]any) string {
	return str(e["run_id"]) + "|" + str(e["event_type"]) + "|" + str(e["occurred_at"])
}

// EventUnchanged checks an event polled again against the first time it was
// polled, both as JSON.
func EventUnchanged(field, runID, first, now string) []Violation {
	if first == now {
		return nil
	}
	return []Violation{{Rule: EventsNeverChange, Field: field, RunID: runID,
		Expected: "the event as first polled: " + first, Got: now}}
}

// EventKeepsSequence checks that an event already polled under one sequence
// comes again under the same one.
func EventKeepsSequence(field, runID string, first, now float64) []Violation {
	if first == now {
		return nil
	}
	return []Violation{{Rule: EventsNeverChange, Field: field + ".sequence", RunID: runID,
		Expected: "sequence " + num(first) + ", as when this event was first polled", Got: num(now)}}
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
