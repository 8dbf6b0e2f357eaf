package mockpush

import (
	"encoding/json"
	"net/http"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
)

// apnsPayload is what the mock reads of a notification's payload.
type apnsPayload struct {
	APS *struct {
		Alert *struct {
			Title string `json:"title"`
			Body  string `json:"body"`
		} `json:"alert"`
	} `json:"aps"`
}

// apnsSend is /3/device/{token}: HTTP/2 only, a provider token signed with the key, of the key
// id and team id, less than an hour old; an apns-topic; a payload with aps.
func (s *Server) apnsSend(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("apns-id")
	if _, err := uuid.Parse(id); err != nil {
		id = uuid.NewString()
	}
	w.Header().Set("apns-id", id)
	if r.ProtoMajor != 2 {
		apnsError(w, http.StatusForbidden, "Forbidden")
		return
	}
	if reason := s.checkProviderToken(strings.TrimPrefix(r.Header.Get("Authorization"), "bearer ")); reason != "" {
		s.opts.Logger.Warn("refused a provider token", "reason", reason)
		apnsError(w, http.StatusForbidden, reason)
		return
	}
	if r.Header.Get("apns-topic") == "" {
		apnsError(w, http.StatusBadRequest, "MissingTopic")
		return
	}
	var p apnsPayload
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&p); err != nil || p.APS == nil {
		apnsError(w, http.StatusBadRequest, "PayloadEmpty")
		return
	}
	token := r.PathValue("token")
	if strings.HasPrefix(token, DeadPrefix) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusGone)
		_ = json.NewEncoder(w).Encode(map[string]any{"reason": "Unregistered", "timestamp": s.opts.Now().UnixMilli()})
		return
	}
	n := Notification{Token: token}
	if p.APS.Alert != nil {
		n.Title, n.Body = p.APS.Alert.Title, p.APS.Alert.Body
	}
	s.accept(n)
	s.opts.Logger.Info("accepted a notification", "gateway", "apns", "apns-id", id)
	w.WriteHeader(http.StatusOK)
}

// checkProviderToken is the APNs reason for refusing a provider token, "" when it is good.
func (s *Server) checkProviderToken(token string) string {
	if token == "" {
		return "MissingProviderToken"
	}
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(tok.Headers) != 1 || tok.Headers[0].KeyID != KeyID {
		return "InvalidProviderToken"
	}
	var claims jwt.Claims
	if err := tok.Claims(&s.cred.ecdsa.PublicKey, &claims); err != nil || claims.Issuer != TeamID || claims.IssuedAt == nil {
		return "InvalidProviderToken"
	}
	if s.opts.Now().Sub(claims.IssuedAt.Time()) > s.opts.ProviderMaxAge {
		return "ExpiredProviderToken"
	}
	return ""
}

func apnsError(w http.ResponseWriter, status int, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"reason": reason})
}
