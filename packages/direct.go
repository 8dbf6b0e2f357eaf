package packages

import "fmt"

// CleanPart applies the rules of docs/package.md, "Templates" to one part of direct content (a submission without a
// template): subjects lose newlines, text and body parts lose control characters other than
// newline and tab, and each part keeps its size limit. part is subject, text, html or body. An
// over-limit part is a *RenderError with code content.too-large.
func CleanPart(part, s string) (string, error) {
	limit := 0
	switch part {
	case "subject":
		limit = limitSubject
	case "text":
		limit = limitText
	case "html":
		limit = limitHTML
	case "body":
		limit = limitBody
	default:
		return "", fmt.Errorf("unknown part %q", part)
	}
	w := &partWriter{limit: limit, mode: part}
	if _, err := w.Write([]byte(s)); err != nil {
		return "", &RenderError{code: CodeContentTooLarge, Part: part,
			Message: fmt.Sprintf("content.%s is over its limit of %d bytes", part, limit)}
	}
	return w.finish(), nil
}
