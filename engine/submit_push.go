package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"switchboard/packages"
)

// pushContent checks direct push content, {title, body, data?}: title and body are cleaned and
// limited as a push template's parts are, and data, compacted, must pass packages.CheckPushData
// as a rendered data part must. Each refusal names its member of content.
func pushContent(c *DirectContent) (map[string]string, string, error) {
	if c.Text != "" || c.Subject != "" {
		return nil, "", NewProblem(CodeContentInvalid, "a push message has content.title and content.body, no text or subject")
	}
	parts := make(map[string]string, 3)
	for _, p := range []struct{ name, value string }{{"title", c.Title}, {"body", c.Body}} {
		if strings.TrimSpace(p.value) == "" {
			return nil, "", NewProblem(CodeContentInvalid, "content."+p.name+" is required for push")
		}
		clean, err := packages.CleanPart(string(ChannelPush), p.name, p.value)
		if err != nil {
			return nil, "", ProblemFrom(err, CodeContentTooLarge)
		}
		parts[p.name] = clean
	}
	if c.Data == nil {
		return parts, "", nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, c.Data); err != nil {
		return nil, "", NewProblem(CodeContentInvalid, "content.data "+packages.ErrPushDataShape.Error())
	}
	if err := packages.CheckPushData(compact.String()); err != nil {
		code := CodeContentInvalid
		if errors.Is(err, packages.ErrPushDataTooLarge) {
			code = CodeContentTooLarge
		}
		return nil, "", NewProblem(code, "content.data "+err.Error())
	}
	parts["data"] = compact.String()
	return parts, "", nil
}
