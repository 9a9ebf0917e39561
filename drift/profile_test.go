package drift

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Adding the same sightings again with AddAgain leaves the profile as Add
// would, one by one: counts included, past a reset, and past the
// profile's bounds (where the sightings that did not fit are counted
// dropped each time, as Add counts them).
func TestAddAgainIsAddOneByOne(t *testing.T) {
	answer := func(n int) []Sighting {
		ss := []Sighting{{Kind: KindStatus, Operation: "GET /agent/runs/{runId}", Status: 200, ContentType: "application/json"}}
		for i := range n {
			ss = append(ss, Sighting{Kind: KindResponseField, Operation: "GET /agent/runs/{runId}", Status: 200,
				Location: fmt.Sprintf("body.m%d", i), Type: "string", Value: "v"})
		}
		return ss
	}
	for _, n := range []int{0, 3, maxFields + 5} {
		one, again := NewProfile(), NewProfile()
		var mark ProfileMark
		for round := range 4 {
			if round == 2 {
				one.Reset()
				again.Reset()
			}
			for range 3 {
				for _, s := range answer(n) {
					one.Add(s)
				}
				again.AddAgain(answer(n), &mark)
			}
			assert.Equal(t, one.Data(), again.Data(), "%d members, round %d", n, round)
		}
	}
}
