package mockpush

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// fcmToken is the token endpoint: it takes an RFC 7523 JWT grant signed with the service
// account's key, for this endpoint's URL, and answers an access token.
func (s *Server) fcmToken(w http.ResponseWriter, r *http.Request) {
	if r.FormValue("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	if why := s.checkGrant(r.FormValue("assertion")); why != "" {
		s.opts.Logger.Warn("refused a grant", "reason", why)
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": why})
		return
	}
	token := "mock-fcm." + rand.Text()
	s.mu.Lock()
	s.tokens[token] = s.opts.Now().Add(s.opts.TokenLifetime)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": token, "token_type": "Bearer",
		"expires_in": int(s.opts.TokenLifetime / time.Second)})
}

// checkGrant says what is wrong with a grant, "" when nothing.
func (s *Server) checkGrant(assertion string) string {
	tok, err := jwt.ParseSigned(assertion, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return "the assertion is not an RS256 JWT"
	}
	var claims jwt.Claims
	var scope struct {
		Scope string `json:"scope"`
	}
	if err := tok.Claims(&s.cred.rsa.PublicKey, &claims, &scope); err != nil {
		return "Invalid JWT Signature."
	}
	if err := claims.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{s.url + "/token"}, Time: s.opts.Now()}, time.Minute); err != nil {
		return "the assertion's audience or lifetime is wrong: " + err.Error()
	}
	if claims.Issuer == "" || !strings.Contains(scope.Scope, "firebase.messaging") {
		return "the assertion names no issuer or not the firebase.messaging scope"
	}
	return ""
}

// fcmMessage is what the mock reads of a messages:send body.
type fcmMessage struct {
	Message struct {
		Token        string `json:"token"`
		Notification struct {
			Title string `json:"title"`
			Body  string `json:"body"`
		} `json:"notification"`
		Data map[string]string `json:"data"`
	} `json:"message"`
}

// fcmSend is projects/{project}/messages:send.
func (s *Server) fcmSend(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("send") != "messages:send" {
		http.NotFound(w, r)
		return
	}
	if !s.validToken(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")) {
		fcmError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "", "Request had invalid authentication credentials.")
		return
	}
	var m fcmMessage
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&m); err != nil || m.Message.Token == "" {
		fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "The message has no valid token.")
		return
	}
	msg := m.Message
	if strings.HasPrefix(msg.Token, DeadPrefix) {
		fcmError(w, http.StatusNotFound, "NOT_FOUND", "UNREGISTERED", "Requested entity was not found.")
		return
	}
	n := s.accept(Notification{Token: msg.Token, Title: msg.Notification.Title, Body: msg.Notification.Body, Data: msg.Data})
	name := fmt.Sprintf("projects/%s/messages/0:%d", r.PathValue("project"), n)
	s.opts.Logger.Info("accepted a notification", "gateway", "fcm", "name", name)
	writeJSON(w, http.StatusOK, map[string]string{"name": name})
}

// validToken reports whether token is an access token the endpoint issued and still valid.
func (s *Server) validToken(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[token]
	return ok && s.opts.Now().Before(exp)
}

// fcmError writes a Google API error, with an FcmError detail when code is not "".
func fcmError(w http.ResponseWriter, status int, rpcStatus, code, message string) {
	e := map[string]any{"code": status, "message": message, "status": rpcStatus}
	if code != "" {
		e["details"] = []map[string]string{{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code}}
	}
	writeJSON(w, status, map[string]any{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
