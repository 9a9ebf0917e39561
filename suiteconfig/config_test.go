package suiteconfig

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigDefaultsAndTags(t *testing.T) {
	c, err := Config{BaseURL: "https://api.example.com/api/v1/", APIKey: "k", ReadOnly: true, Tags: "~@slow"}.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, "https://api.example.com/api/v1", c.BaseURL)
	assert.Equal(t, DefaultTimeout, c.Timeout)
	assert.Equal(t, DefaultConcurrency, c.Concurrency)
	assert.Equal(t, "~@slow && ~@creates-runs && ~@writes", c.TagExpression())

	_, err = Config{}.WithDefaults()
	assert.ErrorContains(t, err, "no base URL")
	assert.ErrorContains(t, err, "no API key")
	_, err = Config{BaseURL: "localhost:4010", APIKey: "k"}.WithDefaults()
	assert.ErrorContains(t, err, "has no scheme")
	_, err = Config{BaseURL: "ftp://host", APIKey: "k"}.WithDefaults()
	assert.ErrorContains(t, err, "want http(s)://host")
}

// A base URL written without its scheme gets a message that says so, not
// Go's URL parser's.
func TestBaseURLWithoutSchemeIsNamed(t *testing.T) {
	for _, u := range []string{"localhost:4010", "127.0.0.1:4010/api/v1", "api.example.com"} {
		_, err := Config{BaseURL: u, APIKey: "k"}.WithDefaults()
		require.Error(t, err, u)
		assert.Contains(t, err.Error(), "has no scheme: write it as http://"+u)
		assert.NotContains(t, err.Error(), "first path segment")
	}
}

// Promising the newest client while the tags leave out all of its
// scenarios is a contradiction, refused before anything is asked.
func TestPromisingTheNewestClientNeedsItsScenarios(t *testing.T) {
	err := Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", NewestClient: true, Tags: "not @newest-client"}.Check()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "the newest client is promised")
}

func TestFailOnClientRefusesAnUnknownVersion(t *testing.T) {
	err := Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", FailOnClient: "typescript-2.0.0"}.Check()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.EqualError(t, err, `fail on client: no client version "typescript-2.0.0": the known ones are python-0.11.0, typescript-1.0.0-alpha.8, typescript-1.4.0-alpha.6, or all`)
}

// A tag no scenario carries is a typo, refused with the nearest known tag;
// a tag of the suite's own features is known even when the features chosen
// (a subset, in tests) do not carry it.
func TestATagNoScenarioCarriesIsRefused(t *testing.T) {
	err := Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Tags: "not @sloww"}.Check()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "no scenario is tagged @sloww; did you mean @slow? the tags are @")

	one := fstest.MapFS{"one.feature": {Data: []byte("Feature: One\n  @mine\n  Scenario: It\n    Given nothing\n")}}
	assert.NoError(t, Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Tags: "@slow or @mine", Features: one}.Check())
}

// Whether a run selects the newest client's scenarios is read from the
// features it runs, the embedded ones or the caller's.
func TestSelectsNewestClientReadsTheFeaturesRun(t *testing.T) {
	for _, tc := range []struct {
		tags     string
		features fs.FS
		selects  bool
	}{
		{"", nil, true},
		{"not " + NewestClientTag, nil, false},
		{"", fstest.MapFS{"one.feature": {Data: []byte("Feature: One\n  Scenario: It\n    Given nothing\n")}}, false},
		{"", fstest.MapFS{"one.feature": {Data: []byte("Feature: One\n  " + NewestClientTag + "\n  Scenario: It\n    Given nothing\n")}}, true},
	} {
		c, err := Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Tags: tc.tags, Features: tc.features}.WithDefaults()
		require.NoError(t, err)
		selects, err := c.SelectsNewestClient()
		require.NoError(t, err)
		assert.Equal(t, tc.selects, selects, "tags %q", tc.tags)
	}
}
