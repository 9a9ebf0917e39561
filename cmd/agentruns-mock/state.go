package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentruns/agentruns/mockserver"
)

// stateStore keeps the mock's state in a file. Every write goes to a
// temporary file in the same folder, is synced, and is renamed over the old
// file, so a crash at any moment leaves either the old file or the new one,
// never a torn one.
type stateStore struct {
	path string
	srv  *mockserver.Server
	log  *slog.Logger

	mu    sync.Mutex // one write at a time
	saved uint64     // srv.Changes() when the file was last written or read
}

// openStateFile readies path for a start: stale temporary files of earlier
// saves are removed, and the file, if it exists, is opened for the mock to
// load (nil if there is none yet). A file that exists but cannot be read or
// understood is an error, here or from loading it (loadError): starting
// empty would silently lose every run in it.
func openStateFile(path string, log *slog.Logger) (*os.File, error) {
	st := &stateStore{path: path, log: log}
	st.removeStaleTemps()
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Find out now, not at the first save, if the folder is unusable.
		if err := st.checkWritable(); err != nil {
			return nil, fmt.Errorf("state file %s: %w", path, err)
		}
		log.Info("no state file yet; starting from the fixtures", "state_file", path)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("state file %s: %w", path, err)
	case info.IsDir():
		return nil, fmt.Errorf("state file %s: is a directory", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, loadError(path, err)
	}
	return f, nil
}

// loadError is the error of a state file that cannot be loaded.
func loadError(path string, err error) error {
	return fmt.Errorf("state file %s: %w; fix or move it away to start from the fixtures", path, err)
}

// newStateStore keeps srv's state in path from now on; loaded says srv
// started from it.
func newStateStore(path string, srv *mockserver.Server, log *slog.Logger, loaded bool) (*stateStore, error) {
	st := &stateStore{path: path, srv: srv, log: log}
	if loaded {
		if err := st.checkWritable(); err != nil {
			return nil, fmt.Errorf("state file %s: %w", path, err)
		}
		log.Info("state loaded", "state_file", path)
	}
	st.saved = srv.Changes()
	return st, nil
}

func (st *stateStore) tempPattern() string { return "." + filepath.Base(st.path) + ".tmp-*" }

// removeStaleTemps deletes temporary files a crash left behind mid-write.
func (st *stateStore) removeStaleTemps() {
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(st.path), st.tempPattern()))
	for _, name := range stale {
		if err := os.Remove(name); err == nil {
			st.log.Warn("removed a temporary file left by an interrupted save", "file", name)
		}
	}
}

func (st *stateStore) checkWritable() error {
	f, err := os.CreateTemp(filepath.Dir(st.path), st.tempPattern())
	if err != nil {
		return fmt.Errorf("cannot write next to it: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// loop saves every period, when something changed since the last save,
// until ctx ends. A failed save is logged and tried again next period.
func (st *stateStore) loop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := st.saveIfChanged(); err != nil {
				st.log.Error("saving the state failed; trying again later", "state_file", st.path, "err", err)
			}
		}
	}
}

func (st *stateStore) saveIfChanged() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.srv.Changes() == st.saved {
		return nil
	}
	return st.saveLocked()
}

// save writes the state whether or not it changed: on shutdown a real
// clock's time must be recorded too.
func (st *stateStore) save() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.saveLocked()
}

func (st *stateStore) saveLocked() (err error) {
	version := st.srv.Changes() // read first: a change during the write is saved next time
	dir := filepath.Dir(st.path)
	f, err := os.CreateTemp(dir, st.tempPattern())
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := st.srv.Save(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil { // the data is on disk before the name points at it
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), st.path); err != nil {
		return err
	}
	syncDir(dir) // make the rename itself survive a power cut
	st.saved = version
	return nil
}

// syncDir flushes a folder's entries. Not every system supports it, and the
// rename is already atomic without it, so a failure is not an error.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
