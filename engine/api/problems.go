package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"switchboard/engine"
)

// problemInfo is the status and title of one problem code.
type problemInfo struct {
	status int
	title  string
}

// problems is the one table mapping codes to HTTP statuses (docs/api.md, "Problem codes").
var problems = map[string]problemInfo{
	engine.CodeRequestInvalid:        {http.StatusBadRequest, "Invalid request"},
	engine.CodeAuthenticationRefused: {http.StatusUnauthorized, "Authentication refused"},
	engine.CodeOperationNotAuthz:     {http.StatusForbidden, "Operation not authorized"},
	engine.CodeProfileNotAuthz:       {http.StatusForbidden, "Profile not authorized"},
	engine.CodeCallbackUnverified:    {http.StatusForbidden, "Callback not verified"},
	engine.CodeMessageNotVisible:     {http.StatusNotFound, "Message not visible"},
	engine.CodeTemplateNotFound:      {http.StatusNotFound, "Template not found"},
	engine.CodeRequestNotFound:       {http.StatusNotFound, "Not found"},
	engine.CodeMethodNotAllowed:      {http.StatusMethodNotAllowed, "Method not allowed"},
	engine.CodeIdempotencyKeyReused:  {http.StatusConflict, "Idempotency key reused"},
	engine.CodeDispatchStarted:       {http.StatusConflict, "Dispatch started"},
	engine.CodeMessageTerminal:       {http.StatusConflict, "Message is final"},
	engine.CodeMessageNotEligible:    {http.StatusConflict, "Message not eligible"},
	engine.CodeIdempotencyExpired:    {http.StatusGone, "Idempotency key expired"},
	engine.CodeBodyTooLarge:          {http.StatusRequestEntityTooLarge, "Request body too large"},
	engine.CodeHeadersTooLarge:       {http.StatusRequestHeaderFieldsTooLarge, "Request headers too large"},
	engine.CodeUnsupportedMediaType:  {http.StatusUnsupportedMediaType, "Unsupported media type"},
	engine.CodeUnprocessable:         {http.StatusUnprocessableEntity, "Unprocessable request"},
	engine.CodeTemplateDataInvalid:   {http.StatusUnprocessableEntity, "Template data invalid"},
	engine.CodeLocaleUnavailable:     {http.StatusUnprocessableEntity, "Locale unavailable"},
	engine.CodeRenderRefused:         {http.StatusUnprocessableEntity, "Render refused"},
	engine.CodeContentInvalid:        {http.StatusUnprocessableEntity, "Content invalid"},
	engine.CodeContentTooLarge:       {http.StatusUnprocessableEntity, "Content too large"},
	engine.CodeTooManySegments:       {http.StatusUnprocessableEntity, "Too many segments"},
	engine.CodeCallbackUnreadable:    {http.StatusUnprocessableEntity, "Callback unreadable"},
	engine.CodeRateLimitExceeded:     {http.StatusTooManyRequests, "Rate limit exceeded"},
	engine.CodeQuotaExceeded:         {http.StatusTooManyRequests, "Quota exceeded"},
	engine.CodeServiceUnavailable:    {http.StatusServiceUnavailable, "Service unavailable"},
}

// Problem is the application/problem+json body: exactly these members.
type Problem struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Status  int    `json:"status"`
	Detail  string `json:"detail"`
	Code    string `json:"code"`
	TraceID string `json:"traceId"`
}

// writeProblem answers err as problem+json. Errors without a code are internal: they become
// service.unavailable, with the cause logged beside the trace id and never shown.
func (s *Server) writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	var p *engine.Problem
	if !errors.As(err, &p) {
		p = &engine.Problem{Code: engine.CodeServiceUnavailable, Detail: "the service cannot answer now", Err: err}
	}
	info, ok := problems[p.Code]
	if !ok {
		info = problems[engine.CodeServiceUnavailable]
	}
	trace := traceOf(w)
	if info.status >= 500 {
		s.log.Error("request failed", "traceId", trace, "route", r.URL.Path, "code", p.Code, "client", s.cfg.TrustedProxies.ClientAddr(r), "err", p.Err)
	} else if p.Err != nil {
		s.log.Debug("request refused", "traceId", trace, "code", p.Code, "client", s.cfg.TrustedProxies.ClientAddr(r), "err", p.Err)
	}
	h := w.Header()
	if p.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((p.RetryAfter+time.Second-1)/time.Second)))
	} else if p.Code == engine.CodeRateLimitExceeded || p.Code == engine.CodeQuotaExceeded || info.status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	h.Set("Content-Type", "application/problem+json")
	w.WriteHeader(info.status)
	body := encodeProblem(p.Code, info, p.Detail, trace)
	if _, err := w.Write(body); err != nil {
		s.log.Debug("write problem", "err", err)
	}
}

// encodeProblem is the problem+json body of one answer.
func encodeProblem(code string, info problemInfo, detail, trace string) []byte {
	body, _ := json.Marshal(Problem{
		Type: "https://switchboard.dev/problems/" + code, Title: info.title, Status: info.status,
		Detail: detail, Code: code, TraceID: trace,
	})
	return body
}
