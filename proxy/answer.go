package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentruns/agentruns/drift"
)

// SummaryAnswerBytes bounds GET /__mock/proxy (and DELETE's answer), which
// the dashboard polls every few seconds: whole, its lists (the latest
// 1,000 violations, 200 requests off the document, the drift's facts) come
// to about 8 MiB, and up to six times that when every byte of a name or
// value needs a JSON escape. Past it the lists are cut (the newest
// violations and requests kept, the drift's first facts, as the dashboard
// shows them) and what was left out is counted and said in left_out; the
// counts above the lists stay whole.
const SummaryAnswerBytes = 1 << 20

// LeftOut is what GET /__mock/proxy left out of its lists to stay within
// SummaryAnswerBytes.
type LeftOut struct {
	Violations  int    `json:"latest"`
	OffDocument int    `json:"latest_requests_off_document"`
	DriftFacts  int    `json:"drift_facts"`
	Says        string `json:"says"`
}

// answerOf is s cut to SummaryAnswerBytes as writeIndented writes it.
// What is left after everything but the three lists is shared among them
// (3/8 the violations, 3/8 the drift, 1/4 the requests off the document,
// what one leaves going to the next), each item measured as written,
// escapes and indentation included.
func answerOf(s Summary) Summary {
	lists := s
	lists.Latest, lists.LatestOffDocument, lists.Drift.Facts = nil, nil, nil
	lists.LeftOut = &LeftOut{Says: fmt.Sprintf("%*s", 400, "")} // room for the sentence
	room := SummaryAnswerBytes - writtenSize(lists, "")
	if room < 0 {
		room = 0
	}
	out := s
	var cut LeftOut
	var used, usedToo int
	out.Latest, cut.Violations, used = newest(s.Latest, room*3/8, "    ")
	out.Drift.Facts, cut.DriftFacts, usedToo = first(s.Drift.Facts, room*3/4-used, "      ")
	out.LatestOffDocument, cut.OffDocument, _ = newest(s.LatestOffDocument, room-used-usedToo, "    ")
	if cut.Violations+cut.OffDocument+cut.DriftFacts == 0 {
		return out
	}
	cut.Says = fmt.Sprintf("to keep this answer within %d KiB, it lists the newest %d of the %d violations kept, "+
		"the newest %d of the %d requests off the document kept and the first %d of the %d drift facts kept; "+
		"GET %s/drift has every drift fact",
		SummaryAnswerBytes>>10, len(out.Latest), len(s.Latest), len(out.LatestOffDocument), len(s.LatestOffDocument),
		len(out.Drift.Facts), len(s.Drift.Facts), ControlPrefix)
	out.LeftOut = &cut
	return out
}

// newest is the newest items of list (oldest first) that fit in room
// bytes, oldest first, how many older ones did not, and the bytes used.
func newest[T any](list []T, room int, indent string) ([]T, int, int) {
	from, used := len(list), 0
	for from > 0 {
		n := writtenSize(list[from-1], indent) + 2 // its comma and newline
		if used+n > room {
			break
		}
		used += n
		from--
	}
	return list[from:], from, used
}

// first is the first items of list that fit in room bytes, how many
// after them did not, and the bytes used.
func first(list []drift.Fact, room int, indent string) ([]drift.Fact, int, int) {
	to, used := 0, 0
	for to < len(list) {
		n := writtenSize(list[to], indent) + 2
		if used+n > room {
			break
		}
		used += n
		to++
	}
	return list[:to], len(list) - to, used
}

// writtenSize is the size of v as writeIndented writes it at the depth
// indent says.
func writtenSize(v any, indent string) int {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent(indent, "  ")
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return 0
	}
	return len(drift.PrintableJSON(b.Bytes()))
}
