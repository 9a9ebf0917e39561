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
			return []Violation{{Rule: EventsOrdered, Field: at("body", i) + ".sequence", RunID: Str(events[i]["run_id"]),
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
	return Str(e["run_id"]) + "#" + num(seq), true
}

// EndOf is the state a terminal event says its run ended in, "" for an
// event of another type.
func EndOf(eventType string) string {
	return map[string]string{"run_succeeded": "SUCCEEDED", "run_failed": "FAILED", "run_errored": "ERROR", "run_cancelled": "CANCELLED"}[eventType]
}

// StateOf is the state an event type moves its run to, "" for a type
// this package does not know (clients skip those).
func StateOf(eventType string) string {
	if s := EndOf(eventType); s != "" {
		return s
	}
	return map[string]string{"run_in_progress": "INPROGRESS", "run_blocked": "BLOCKED"}[eventType]
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

// EventsStillThere checks a poll that was not cut short by its limit
// against the sequences polled before for the same runs: every one after
// since must come again. An event renumbered or dropped does not.
func EventsStillThere(runID string, since float64, before []float64, now map[float64]bool) []Violation {
	for _, seq := range before {
		if seq > since && !now[seq] {
			return []Violation{{Rule: EventsNeverChange, Field: "body", RunID: runID,
				Expected: "the event of sequence " + num(seq) + ", polled before for run " + runID + " (since=" + num(since) + ")",
				Got:      "no event of that sequence"}}
		}
	}
	return nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
