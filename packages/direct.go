package packages

import "fmt"

// CleanPart applies the rules of docs/package.md, "Templates" to one part of direct content (a
// submission without a template) of a channel: subjects and push titles lose newlines, the other
// parts lose control characters other than newline and tab, and each part keeps its channel's
// size limit. An over-limit part is a *RenderError with code content.too-large.
func CleanPart(channel, part, s string) (string, error) {
	limit := partLimit(channel, part)
	if limit == 0 {
		return "", fmt.Errorf("unknown part %q", part)
	}
	w := &partWriter{limit: limit, mode: part}
	if _, err := w.Write([]byte(s)); err != nil {
		return "", &RenderError{code: CodeContentTooLarge, Part: part,
			Message: fmt.Sprintf("content.%s is over its limit of %d bytes", part, limit)}
	}
	return w.finish(), nil
}
