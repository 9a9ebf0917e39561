package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
)

// --newest-client with tags that leave out every scenario of the newest
// client contradicts itself: a usage error, before anything is asked.
func TestNewestClientWithoutItsScenariosIsAUsageError(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, nil)
	_, errOut, err := runCmd(t, "--base-url", srv.URL, "--api-key", "wk-mock-alice", "--newest-client", "--tags", "not @newest-client")
	require.ErrorIs(t, err, errUsage, errOut)
	assert.Contains(t, err.Error(), "the newest client is promised")
}
