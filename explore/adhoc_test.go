package explore_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/agentruns/agentruns/explore"
	"github.com/agentruns/agentruns/internal/suitetest"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/refserver"
)

func TestAdhocSeeds(t *testing.T) {
	if os.Getenv("EXPLORE_ADHOC") == "" {
		t.Skip()
	}
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(strconv.Itoa(int(seed)), func(t *testing.T) {
			t.Parallel()
			mock := suitetest.NewMock(t, mockserver.Options{}, nil)
			res := explored(t, mock.URL, 1500, seed*101)
			if len(res.Findings) > 0 {
				t.Error("mock: " + describe(res))
			}
			base := suitetest.NewReferenceServer(t, refserver.Options{})
			res = exploredWith(t, explore.Options{BaseURL: base, APIKey: "wk-mock-alice", Steps: 1500, Seed: seed * 101})
			if len(res.Findings) > 0 {
				t.Error("refserver: " + describe(res))
			}
		})
	}
}
