package packages

import "strings"

// partWriter receives a part's output from the template engine. It drops control characters
// as the part's kind requires, replaces CR and LF in subjects with a space, and fails with
// errTooLarge as soon as the cleaned output passes the part's limit, which stops execution
// early instead of building an oversized string.
//
// Control characters are C0 (U+0000-U+001F), DEL (U+007F) and C1 (U+0080-U+009F, encoded
// as 0xC2 0x80-0x9F). Kept: newline and tab in text, body, data and sms parts; tab in subjects and titles;
// newline, tab and CR in html parts.
type partWriter struct {
	b     strings.Builder
	limit int
	mode  string // the part name: subject, title, text, html, body or data
	// pending is set when the previous write ended with 0xC2, the first byte of a C1
	// control, so that a sequence split across writes is still recognised.
	pending bool
}

func (w *partWriter) Write(p []byte) (int, error) {
	n := len(p)
	if w.pending {
		w.pending = false
		if len(p) > 0 && p[0] >= 0x80 && p[0] <= 0x9F {
			p = p[1:]
		} else if err := w.put([]byte{0xC2}); err != nil {
			return 0, err
		}
	}
	clean := true
	for _, c := range p {
		if c < 0x20 || c == 0x7F || c == 0xC2 {
			clean = false
			break
		}
	}
	if clean {
		return n, w.put(p)
	}
	start := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == 0xC2:
			if i+1 == len(p) {
				if err := w.put(p[start:i]); err != nil {
					return 0, err
				}
				w.pending = true
				return n, nil
			}
			if next := p[i+1]; next >= 0x80 && next <= 0x9F {
				if err := w.put(p[start:i]); err != nil {
					return 0, err
				}
				i++
				start = i + 1
			}
		case c < 0x20 || c == 0x7F:
			if w.keeps(c) {
				continue
			}
			if err := w.put(p[start:i]); err != nil {
				return 0, err
			}
			start = i + 1
			if w.singleLine() && (c == '\n' || c == '\r') {
				if err := w.put([]byte{' '}); err != nil {
					return 0, err
				}
			}
		}
	}
	if err := w.put(p[start:]); err != nil {
		return 0, err
	}
	return n, nil
}

// keeps reports whether a C0 control or DEL stays in this kind of part.
func (w *partWriter) keeps(c byte) bool {
	switch {
	case w.singleLine():
		return c == '\t'
	case w.mode == "html":
		return c == '\t' || c == '\n' || c == '\r'
	}
	return c == '\t' || c == '\n'
}

// singleLine reports whether the part is one line: an email subject or a push title.
func (w *partWriter) singleLine() bool { return w.mode == "subject" || w.mode == "title" }

func (w *partWriter) put(p []byte) error {
	if w.b.Len()+len(p) > w.limit {
		return errTooLarge
	}
	w.b.Write(p)
	return nil
}

// finish returns the part's text. A dangling 0xC2 is kept (it was not a control).
func (w *partWriter) finish() string {
	if w.pending {
		w.pending = false
		w.b.WriteByte(0xC2)
	}
	if w.singleLine() {
		return strings.TrimSpace(w.b.String())
	}
	return w.b.String()
}
