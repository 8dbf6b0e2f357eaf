package api

import (
	"net/http"

	"switchboard/engine"
	"switchboard/packages"
	"switchboard/packages/jsonread"
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
	body, err := readJSON(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var locale string
	var dataValue jsonread.Value
	err = members(body.Root(), "", func(name, val jsonread.Value) error {
		switch string(name.Bytes()) {
		case "locale":
			return stringMember("locale", val, &locale)
		case "data":
			dataValue = val
			return nil
		}
		return unknownMember("", name)
	})
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	data, err := packages.DataOf(dataValue)
	if err != nil {
		s.writeProblem(w, r, engine.ProblemFrom(err, engine.CodeTemplateDataInvalid))
		return
	}
	if err := tmpl.ValidateData(data); err != nil {
		s.writeProblem(w, r, engine.ProblemFrom(err, engine.CodeTemplateDataInvalid))
		return
	}
	out, err := tmpl.Render(locale, data)
	if err != nil {
		s.writeProblem(w, r, engine.ProblemFrom(err, engine.CodeRenderRefused))
		return
	}
	writeJSON(w, http.StatusOK, previewAnswer{
		Template: engine.TemplateRef{ID: id, Version: version}, Locale: locale,
		Channel: tmpl.Channel, Parts: out.Parts, SMS: out.SMS,
	})
}
