package store

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"mime"
	"path"
	"strings"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/google/uuid"
)

// Handoff attachments: the snapshot files a run's execution leaves, when it
// ends, for whoever continues the work (a third-party harness starting the
// next execution, say). Which files a run leaves is part of its fate (the
// "handoff" key of a fate rule or X-Mock-Fate, or a fixture run's
// "handoff"); every execution of the run leaves the same names, each file
// with an id of that execution's, and the listing shows those of the
// latest execution that has ended. Nothing but the names is stored: ids
// and contents derive from the run.

// Limits of a fate's handoff files.
const (
	MaxHandoffFiles    = 10
	MaxHandoffNameSize = 255
)

// ErrHandoffNotFound is an attachment id no ended execution of the run has.
var ErrHandoffNotFound = sentinel(NotFound, "no handoff file with this id")

// parseHandoff reads "workspace.tar.gz,notes.md" (or "none"): plain file
// names, without a folder, each once.
func parseHandoff(value string) ([]string, error) {
	if strings.EqualFold(strings.TrimSpace(value), "none") {
		return []string{}, nil
	}
	var out []string
	for _, name := range strings.Split(value, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "" || name == "." || name == "..":
			return nil, fmt.Errorf("handoff: %q is not a file name (join several with a comma, in a quoted value)", name)
		case len(name) > MaxHandoffNameSize:
			return nil, fmt.Errorf("handoff: a file name is %d bytes; the limit is %d", len(name), MaxHandoffNameSize)
		case strings.ContainsAny(name, "/\\\x00"):
			return nil, fmt.Errorf("handoff: %q holds a folder; name a file only", name)
		}
		for _, seen := range out {
			if seen == name {
				return nil, fmt.Errorf("handoff: %q is named twice", name)
			}
		}
		out = append(out, name)
	}
	if len(out) > MaxHandoffFiles {
		return nil, fmt.Errorf("handoff: %d files; the limit is %d", len(out), MaxHandoffFiles)
	}
	return out, nil
}

// HandoffFile is one file an ended execution left.
type HandoffFile struct {
	ID       string
	Name     string
	MIMEType string
}

var handoffNamespace = uuid.MustParse("3e8b1f2a-7c4d-4e9a-b5f6-1a2b3c4d5e6f")

// endedExecution is the number of the run's latest execution that has
// ended, counted from 0, and false when none has.
func (v View) endedExecution() (int, bool) {
	exec := int(v.Run.Timeline.Execution)
	if !v.Snap.State.Terminal() {
		exec--
	}
	return exec, exec >= 0
}

// HandoffFiles are the files the run's latest ended execution left; none
// while no execution has ended.
func (v View) HandoffFiles() []HandoffFile {
	exec, ok := v.endedExecution()
	if !ok {
		return []HandoffFile{}
	}
	out := make([]HandoffFile, 0, len(v.Run.Handoff))
	for i, name := range v.Run.Handoff {
		id := uuid.NewSHA1(handoffNamespace, fmt.Appendf(nil, "%s/%d/%d", v.Run.ID, exec, i))
		out = append(out, HandoffFile{ID: id.String(), Name: name, MIMEType: handoffMIMEType(name)})
	}
	return out
}

func handoffMIMEType(name string) string {
	switch ext := strings.ToLower(path.Ext(name)); {
	case ext == ".gz" || ext == ".tgz":
		return "application/gzip"
	case ext == ".md":
		return "text/markdown"
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
		return "application/octet-stream"
	}
}

// Handoff is the handoff files of a run p's team may see, with the run.
func (ms *Session) Handoff(p *fixtures.Principal, runID string) (View, []HandoffFile, error) {
	v, err := ms.Get(p, runID)
	if err != nil {
		return View{}, nil, err
	}
	return v, v.HandoffFiles(), nil
}

// HandoffContent is the bytes of one handoff file of a run, whatever its
// team (a signed download), with the file.
func (ms *Session) HandoffContent(runID, fileID string) (HandoffFile, []byte, error) {
	v, err := ms.Run(runID)
	if err != nil {
		return HandoffFile{}, nil, err
	}
	for _, f := range v.HandoffFiles() {
		if f.ID == fileID {
			return f, handoffContent(v, f), nil
		}
	}
	return HandoffFile{}, nil, ErrHandoffNotFound.because("run %s has no handoff file %q in its latest ended execution", runID, fileID)
}

// handoffContent is what a handoff file holds: notes on where the run got
// to, as text, or inside a gzipped tar for an archive's name.
func handoffContent(v View, f HandoffFile) []byte {
	notes := fmt.Sprintf("# Handoff from run %s\n\n%s\n\nPrompt: %s\nState: %s\n", v.Run.ID, v.Run.Title, v.Run.Prompt, v.Snap.State)
	for _, fu := range v.Run.FollowupList() {
		notes += "Follow-up: " + fu.Message + "\n"
	}
	if f.MIMEType != "application/gzip" {
		return []byte(notes)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	// Writes to a bytes.Buffer do not fail.
	_ = tw.WriteHeader(&tar.Header{Name: "HANDOFF.md", Mode: 0o644, Size: int64(len(notes)), ModTime: v.Snap.UpdatedAt})
	_, _ = tw.Write([]byte(notes))
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}
