package packages

import (
	"net/mail"
	"regexp"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Defaults and ranges (docs/package.md, "switchboard.yaml").
const (
	apiVersion                  = "switchboard/v1"
	manifestKind                = "Package"
	manifestFile                = "switchboard.yaml"
	defaultMaximumAttempts      = 5
	defaultInitialDelaySeconds  = 30
	defaultMaximumDelaySeconds  = 3600
	maxMaximumAttempts          = 20
	maxDelaySeconds             = 86400
	defaultExpirySeconds        = 86400
	minExpirySeconds            = 60
	maxExpirySeconds            = 2592000
	minSegments, maxSegments    = 1, 10
	maxListEntries              = 256
	maxSenderBytes              = 254
	onUncertainHold             = "hold"
	onUncertainRetry            = "retry"
	roleSender, roleOperator    = "sender", "operator"
	roleReceiver                = "receiver"
	channelEmail, channelSMS    = "email", "sms"
	channelPeer, channelChat    = "peer", "chat"
	channelPush                 = "push"
	kindHTTP, kindSMTP, kindP2P = "http", "smtp", "peer"
)

var (
	identifierPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)
	versionPattern    = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{0,31}$`)
	e164Pattern       = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)
	alphaSender       = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9 ]{0,9}[A-Za-z0-9])?$`)
	letterPattern     = regexp.MustCompile(`[A-Za-z]`)
	// tokenPattern: OAuth client ids and scope tokens (RFC 6749 scope-token characters).
	tokenPattern = regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]{1,255}$`)
)

// validIdentifier reports whether s is lowercase kebab case, 1 to 64 characters.
func validIdentifier(s string) bool { return identifierPattern.MatchString(s) }

// manifest is switchboard.yaml decoded, each entry kept with its YAML mapping so that
// cross-reference checks can name the line and member they refuse.
type manifest struct {
	// ids holds, per list, every id declared with a valid identifier, even by an entry that
	// is otherwise refused, so that references to it do not cascade into more errors.
	ids map[string]map[string]bool
	// versions holds every version declared per template id, as written, for the same reason.
	versions       map[string][]string
	providers      []decl[*Provider]
	senderProfiles []decl[*SenderProfile]
	templates      []decl[TemplateKey]
	accessProfiles []decl[*AccessProfile]
}

type decl[T any] struct {
	v T
	m *ymap
}

// parseManifest decodes and checks the fields of switchboard.yaml. Entries with an invalid
// or duplicate id are reported and left out.
func parseManifest(y *ydoc, root *yaml.Node) *manifest {
	top := y.mapping(root, "", "apiVersion", "kind", "providers", "senderProfiles", "templates", "accessProfiles")
	if top == nil {
		return nil
	}
	if top.required("apiVersion") {
		if v, ok := top.str("apiVersion"); ok && v != apiVersion {
			top.errf("apiVersion", "must be %q", apiVersion)
		}
	}
	if top.required("kind") {
		if v, ok := top.str("kind"); ok && v != manifestKind {
			top.errf("kind", "must be %q", manifestKind)
		}
	}
	mf := &manifest{ids: map[string]map[string]bool{}, versions: map[string][]string{}}
	mf.entries(top, "providers", []string{"id", "kind", "idempotentSubmit"}, func(m *ymap) {
		if p := parseProvider(m); p != nil {
			mf.providers = append(mf.providers, decl[*Provider]{p, m})
		}
	})
	mf.entries(top, "senderProfiles", []string{"id", "channel", "provider", "fallbackProviders", "sender",
		"maximumSegments", "retry", "onUncertain", "acceptDuplicates", "defaultExpirySeconds"}, func(m *ymap) {
		if p := parseSenderProfile(m); p != nil {
			mf.senderProfiles = append(mf.senderProfiles, decl[*SenderProfile]{p, m})
		}
	})
	mf.entries(top, "templates", []string{"id", "version"}, func(m *ymap) {
		if k, ok := parseTemplateDecl(m); ok {
			mf.templates = append(mf.templates, decl[TemplateKey]{k, m})
		}
	})
	if top.required("accessProfiles") {
		if n := top.values["accessProfiles"]; n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
			top.errf("accessProfiles", "at least one access profile is required")
		}
	}
	mf.entries(top, "accessProfiles", []string{"id", "role", "clients", "requiredScopes", "senderProfiles",
		"templates", "allowDirectContent", "requestsPerMinute", "burst", "dailyLimit", "inboxProviders",
		"deviceTokenInEvents"}, func(m *ymap) {
		if p := parseAccessProfile(m); p != nil {
			mf.accessProfiles = append(mf.accessProfiles, decl[*AccessProfile]{p, m})
		}
	})
	mf.refuseDuplicates()
	return mf
}

// entries walks a list of closed mappings.
func (mf *manifest) entries(top *ymap, key string, allowed []string, each func(*ymap)) {
	ids := map[string]bool{}
	mf.ids[key] = ids
	items := top.seq(key)
	if len(items) > maxListEntries {
		top.errf(key, "at most %d entries are allowed", maxListEntries)
		return
	}
	for i, it := range items {
		if m := top.y.mapping(it, memberIndex(top.sub(key), i), allowed...); m != nil {
			if id, ok := m.values["id"]; ok && id.Kind == yaml.ScalarNode && validIdentifier(id.Value) {
				ids[id.Value] = true
				if v, ok := m.values["version"]; ok && key == "templates" && v.Kind == yaml.ScalarNode {
					mf.versions[id.Value] = append(mf.versions[id.Value], v.Value)
				}
			}
			each(m)
		}
	}
}

func (mf *manifest) refuseDuplicates() {
	mf.providers = dedupe(mf.providers, func(p *Provider) string { return p.ID })
	mf.senderProfiles = dedupe(mf.senderProfiles, func(p *SenderProfile) string { return p.ID })
	mf.accessProfiles = dedupe(mf.accessProfiles, func(p *AccessProfile) string { return p.ID })
	mf.templates = dedupe(mf.templates, func(k TemplateKey) string { return k.ID + "\x00" + k.Version })
}

func dedupe[T any](list []decl[T], key func(T) string) []decl[T] {
	seen := map[string]bool{}
	out := list[:0]
	for _, d := range list {
		k := key(d.v)
		if seen[k] {
			d.m.errf("id", "duplicate id: this entry is declared twice")
			continue
		}
		seen[k] = true
		out = append(out, d)
	}
	return out
}

// identifier reads a required identifier member.
func identifier(m *ymap, key string) (string, bool) {
	if !m.required(key) {
		return "", false
	}
	s, ok := m.str(key)
	if !ok {
		return "", false
	}
	if !validIdentifier(s) {
		m.errf(key, "%q is not an identifier (1-64 characters of a-z, 0-9 and '-', not starting or ending with '-')", s)
		return "", false
	}
	return s, true
}

// oneOf reads a string member that must be one of choices; def applies when it is absent
// and def is not empty, otherwise it is required.
func oneOf(m *ymap, key, def string, choices ...string) (string, bool) {
	if !m.has(key) {
		if def != "" {
			return def, true
		}
		m.errf(key, "is required")
		return "", false
	}
	s, ok := m.str(key)
	if !ok {
		return "", false
	}
	if !contains(choices, s) {
		m.errf(key, "%q is not one of %v", s, choices)
		return "", false
	}
	return s, true
}

// intIn reads an integer member within [lo, hi]; def applies when it is absent.
func intIn(m *ymap, key string, def, lo, hi int) (int, bool) {
	if !m.has(key) {
		return def, true
	}
	v, ok := m.integer(key)
	if !ok {
		return 0, false
	}
	if v < lo || v > hi {
		m.errf(key, "must be between %d and %d", lo, hi)
		return 0, false
	}
	return v, true
}

func parseProvider(m *ymap) *Provider {
	id, okID := identifier(m, "id")
	kind, okKind := oneOf(m, "kind", "", kindHTTP, kindSMTP, kindP2P)
	idem, okIdem := m.boolean("idempotentSubmit")
	if m.has("idempotentSubmit") && okIdem && idem && okKind && kind != kindHTTP {
		m.errf("idempotentSubmit", "only http providers may declare idempotentSubmit")
		okIdem = false
	}
	if !okID || !okKind || (m.has("idempotentSubmit") && !okIdem) {
		return nil
	}
	return &Provider{ID: id, Kind: kind, IdempotentSubmit: idem}
}

func parseTemplateDecl(m *ymap) (TemplateKey, bool) {
	id, okID := identifier(m, "id")
	if !m.required("version") {
		return TemplateKey{}, false
	}
	v, ok := m.str("version")
	if ok && !versionPattern.MatchString(v) {
		m.errf("version", "%q is not a version (1-32 characters of a-z, 0-9, '.' and '-', starting with a letter or digit)", v)
		ok = false
	}
	return TemplateKey{ID: id, Version: v}, okID && ok
}

// validSender checks a sender against its channel: an email address for email, an E.164
// number or a 1-11 character alphanumeric id (with at least one letter) for sms.
func validSender(channel, s string) (string, bool) {
	if len(s) > maxSenderBytes {
		return "is longer than 254 bytes", false
	}
	switch channel {
	case channelEmail:
		a, err := mail.ParseAddress(s)
		if err != nil || a.Name != "" || a.Address != s {
			return "must be one email address such as notices@example.org (no display name)", false
		}
	case channelSMS:
		if e164Pattern.MatchString(s) {
			return "", true
		}
		if alphaSender.MatchString(s) && letterPattern.MatchString(s) {
			return "", true
		}
		return "must be an E.164 number such as +15550100 or an alphanumeric id of 1-11 letters, digits and spaces", false
	case channelChat:
		for _, r := range s {
			if !unicode.IsPrint(r) {
				return "must be printable text such as a bot's name (no control characters or line breaks)", false
			}
		}
	}
	return "", true
}
