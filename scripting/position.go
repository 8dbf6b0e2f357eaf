package scripting

import (
	"regexp"
	"strings"
)

// goja's parser reports "NAME: Line L:C MESSAGE", wrapped in a SyntaxError.
var parserPosition = regexp.MustCompile(`^(?:SyntaxError: )?(.*?): Line (\d+):(\d+) (.*?)(?: \(and \d+ more errors\))?$`)

// syntaxMessage turns a parse error of the script name into "NAME:LINE:COLUMN: syntax error:
// MESSAGE", the form editors and terminals link to; an error of another shape keeps its text.
func syntaxMessage(name string, err error) string {
	text := err.Error()
	if m := parserPosition.FindStringSubmatch(text); m != nil && m[1] == name {
		return name + ":" + m[2] + ":" + m[3] + ": syntax error: " + m[4]
	}
	return name + ": syntax error: " + strings.TrimPrefix(text, "SyntaxError: ")
}
