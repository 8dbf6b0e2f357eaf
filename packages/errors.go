package packages

import (
	"fmt"

	"switchboard/packages/yamlwalk"
)

// Stable codes carried by the errors of this package. Load diagnostics use the package.*,
// template.*, provider.* and content.* codes; Render and ValidateData use the codes of SPEC
// section 5; WriteStarter uses the init.* codes.
const (
	// CodePackageInvalid: a manifest, layout or cross-reference problem.
	CodePackageInvalid = "package.invalid"
	// CodePackageUnreadable: a file or folder of the package could not be read (I/O).
	CodePackageUnreadable = "package.unreadable"
	// CodeTemplateInvalid: a template.yaml, schema.json or part file is wrong.
	CodeTemplateInvalid = "template.invalid"
	// CodeProviderInvalid: a provider.yaml or adapter script is wrong or misplaced.
	CodeProviderInvalid = "provider.invalid"
	// CodeDataInvalid: template data does not validate against the template's schema.
	CodeDataInvalid = "template.data-invalid"
	// CodeLocaleUnavailable: the template does not declare the requested locale.
	CodeLocaleUnavailable = "template.locale-unavailable"
	// CodeRenderRefused: rendering failed (missing key, null value, function error).
	CodeRenderRefused = "template.render-refused"
	// CodeContentTooLarge: a rendered part exceeds its size limit.
	CodeContentTooLarge = "content.too-large"
	// CodeTooManySegments: an SMS text needs more segments than the sender profile allows.
	CodeTooManySegments = "content.too-many-segments"
	// CodeInitExists: WriteStarter was given a folder that already exists.
	CodeInitExists = "init.exists"
	// CodeInitUnwritable: WriteStarter could not create the folder or one of its files.
	CodeInitUnwritable = "init.unwritable"
)

// Diagnostic is one problem found while loading a package. Path is relative to the package
// root with forward slashes ("." for the root itself); Line is 1-based and set only where the
// file format has lines; Member names the offending YAML member (for example
// "senderProfiles[0].retry.maximumAttempts") when there is one. Message never holds secrets;
// it may quote package content, never submitted data. It is the walker's diagnostic, which
// runtime file problems are too.
type Diagnostic = yamlwalk.Diagnostic

// LoadError is what Load returns when a package is refused. It holds every problem found,
// not only the first, in the order they were found (manifest, templates, providers, then
// cross-references). Each Diagnostic carries its precise code; Environmental reports a
// package that could not be read (package.unreadable only: the command line exits 3).
type LoadError = yamlwalk.LoadError

// DataError reports template data that does not validate against the template's schema.
// Message names the failing JSON pointer paths and schema keywords but never echoes a value,
// so it is safe to show the caller.
type DataError struct {
	// Paths lists the JSON pointers (RFC 6901, "" for the document root) that failed.
	Paths []string
	// Message is the caller-safe description.
	Message string
}

// Code returns template.data-invalid.
func (e *DataError) Code() string { return CodeDataInvalid }

// Error returns the caller-safe message (Code gives the code), ready for a problem's detail.
func (e *DataError) Error() string { return e.Message }

// RenderError reports a template that could not be rendered, or rendered content that is
// refused. Message is safe to show the caller (it names the part, locale, template line and the
// template expression, never a data value); Err, when set, is the internal cause for logs.
type RenderError struct {
	code string
	// Part and Locale name what was being rendered (empty when not applicable).
	Part   string
	Locale string
	// Line is the line of the part file where execution stopped, 0 when unknown.
	Line    int
	Message string
	Err     error
}

// Code returns one of template.locale-unavailable, template.render-refused, content.too-large,
// or content.too-many-segments.
func (e *RenderError) Code() string { return e.code }

// Error returns the caller-safe message (Code gives the code), ready for a problem's detail.
func (e *RenderError) Error() string { return e.Message }

// Unwrap returns the internal cause.
func (e *RenderError) Unwrap() error { return e.Err }

// InitError reports why WriteStarter refused or failed.
type InitError struct {
	code string
	// Dir is the folder WriteStarter was asked to create.
	Dir string
	Err error
}

// Code returns init.exists (the folder exists already) or init.unwritable (I/O failure).
func (e *InitError) Code() string { return e.code }

// Error describes the failure.
func (e *InitError) Error() string {
	if e.code == CodeInitExists {
		return fmt.Sprintf("%s: %s already exists; init writes into a new folder", e.code, e.Dir)
	}
	return fmt.Sprintf("%s: %s: %v", e.code, e.Dir, e.Err)
}

// Unwrap returns the underlying I/O error, if any.
func (e *InitError) Unwrap() error { return e.Err }

// diagnostics collects problems while loading.
type diagnostics struct {
	yamlwalk.Diagnostics
}

func (d *diagnostics) add(code, path string, line int, member, format string, args ...any) {
	d.Add(code, path, line, member, format, args...)
}

func (d *diagnostics) empty() bool { return d.Empty() }
