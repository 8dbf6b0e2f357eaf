package api

import (
	"net/http"

	"switchboard/engine"
	"switchboard/packages"
)

// previewAnswer is the preview route's answer: the rendered parts and, for SMS, their size.
type previewAnswer struct {
	Template engine.TemplateRef `json:"template"`
	Locale   string             `json:"locale"`
	Channel  string             `json:"channel"`
	Parts    map[string]string  `json:"parts"`
	SMS      *packages.SMSInfo  `json:"sms,omitempty"`
}

// preview is POST /v1/templates/{id}/versions/{version}/preview: it validates and renders,
// and stores nothing.
func (s *Server) preview(w http.ResponseWriter, r *http.Request, caller engine.Caller) {
	id, version := r.PathValue("id"), r.PathValue("version")
	access := s.cfg.Package.AccessProfile(caller.Profile)
	if access == nil || !access.AllowsTemplate(id) {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeProfileNotAuthz, "the caller may not use this template"))
		return
	}
	tmpl := s.cfg.Package.Template(id, version)
	if tmpl == nil {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeTemplateNotFound, "no such template version"))
		return
	}
	body, err := readBody(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var shape struct {
		Locale string  `json:"locale"`
		Data   rawJSON `json:"data"`
	}
	if err := decodeStrict(body, &shape); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	raw := []byte(shape.Data)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	data, err := packages.DecodeData(raw)
	if err != nil {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeRequestInvalid, "data is not valid JSON"))
		return
	}
	if err := tmpl.ValidateData(data); err != nil {
		s.writeProblem(w, r, engine.ProblemFrom(err, engine.CodeTemplateDataInvalid))
		return
	}
	out, err := tmpl.Render(shape.Locale, data)
	if err != nil {
		s.writeProblem(w, r, engine.ProblemFrom(err, engine.CodeRenderRefused))
		return
	}
	writeJSON(w, http.StatusOK, previewAnswer{
		Template: engine.TemplateRef{ID: id, Version: version}, Locale: shape.Locale,
		Channel: tmpl.Channel, Parts: out.Parts, SMS: out.SMS,
	})
}

// rawJSON keeps a member's raw bytes.
type rawJSON []byte

// UnmarshalJSON keeps a copy of the raw bytes.
func (j *rawJSON) UnmarshalJSON(b []byte) error {
	*j = append((*j)[:0], b...)
	return nil
}
