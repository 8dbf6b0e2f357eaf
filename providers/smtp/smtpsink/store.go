package smtpsink

import (
	"fmt"
	"os"
	"path/filepath"
)

// store writes one message to a new .eml file, atomically: it is written under a temporary
// name and renamed, so a reader of the folder never sees half a message. Names sort in the
// order the sink took the messages: UTC time to the nanosecond, then a sequence number.
func (s *Sink) store(b []byte) (string, error) {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	name := fmt.Sprintf("%s-%06d.eml", s.opts.Now().UTC().Format("20060102T150405.000000000Z"), seq)
	tmp, err := os.CreateTemp(s.dir, ".incoming-*")
	if err != nil {
		return "", fmt.Errorf("create a file in %s: %w", s.dir, err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	path := filepath.Join(s.dir, name)
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}
