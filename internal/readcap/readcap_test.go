package readcap

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileReadsUpToTheLimitAndRefusesMore(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(name, []byte("0123456789"), 0o644))
	b, err := File(name, 10)
	require.NoError(t, err)
	assert.Equal(t, "0123456789", string(b))
	_, err = File(name, 9)
	assert.EqualError(t, err, name+": larger than 9 bytes, the most read of one file")
	_, err = File(filepath.Join(t.TempDir(), "missing"), 10)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestFileStopsReadingAStreamThatNeverEnds(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no /dev/zero")
	}
	_, err := File("/dev/zero", 1<<20)
	assert.EqualError(t, err, "/dev/zero: larger than 1 MiB, the most read of one file")
}
