package packages

// This file fixes the public surface of a template. The implementation (schema compilation,
// rendering, SMS counting) lives in the other files of the package.

import "github.com/santhosh-tekuri/jsonschema/v6"

// Template is one loaded template version with its compiled schema and its parts parsed
// once per locale. It is immutable after Load and safe for concurrent use.
//
// Methods: ValidateData (schema.go) returns a *DataError (code template.data-invalid);
// Render (render.go) returns a *RenderError (template.locale-unavailable,
// template.render-refused, content.too-large). Data is a value decoded from JSON with numbers
// as json.Number (see DecodeData).
type Template struct {
	ID      string
	Version string
	// Channel is email, sms or peer.
	Channel string
	// Locales are the declared locales, in template.yaml order.
	Locales []string
	// Parts are the declared part names, in template.yaml order.
	Parts []string
	// ContentType is the body's media type for peer templates (default application/json),
	// empty for the other channels.
	ContentType string
	// Sample is the decoded sample.json (json.Number for numbers), or nil without one.
	Sample any
	// Samples holds the sample rendered in each locale at load, nil without a sample; for
	// sms templates each one carries its SMS segments (what `check` prints).
	Samples map[string]*Rendered

	schema   *jsonschema.Schema
	locales  map[string][]*compiledPart // parts in Parts order, by locale
	jsonBody bool                       // a peer body of a JSON media type: checked after rendering
}

// Rendered is the output of rendering one template in one locale.
type Rendered struct {
	// Parts holds each rendered part by name (subject, text, html, body).
	Parts map[string]string
	// SMS is set for sms templates.
	SMS *SMSInfo
}

// SMSInfo is an SMS text's encoding and size.
type SMSInfo struct {
	Encoding string `json:"encoding"` // gsm7 | ucs2
	Units    int    `json:"units"`
	Segments int    `json:"segments"`
}
