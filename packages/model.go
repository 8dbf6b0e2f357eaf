package packages

// Package is a loaded, validated package. It is immutable after Load and safe for concurrent
// use. The lookup methods also work on a Package built by hand (for tests), by scanning.
type Package struct {
	// Root is the absolute path of the package folder.
	Root string
	// Digest is "sha256:" and the hex SHA-256 of the canonical file listing.
	Digest         string
	Providers      []*Provider // in manifest order
	SenderProfiles []*SenderProfile
	Templates      []*Template // in manifest order
	AccessProfiles []*AccessProfile

	providers      map[string]*Provider
	senderProfiles map[string]*SenderProfile
	templates      map[TemplateKey]*Template
	accessProfiles map[string]*AccessProfile
	clients        map[string]*AccessProfile
}

// Provider is a declared provider and, for http providers (and peer providers that carry one),
// its adapter.
type Provider struct {
	ID               string
	Kind             string // http | smtp | peer
	IdempotentSubmit bool
	Adapter          *Adapter // nil when the provider has no adapter
}

// CanCarry reports whether the provider kind can carry a channel (smtp: email; peer: peer;
// http: any, and only http carries chat and push).
func (p *Provider) CanCarry(channel string) bool {
	switch p.Kind {
	case "smtp":
		return channel == "email"
	case "peer":
		return channel == "peer"
	}
	return p.Kind == "http"
}

// Adapter is a provider's provider.yaml with its script source (loaded and size-checked here,
// compiled and run by scripting/).
type Adapter struct {
	ScriptPath       string // path relative to the package root
	Source           string
	Method           string   // request method, upper case (POST, PUT, …)
	RequestHeaders   []string // lower-case header names prepare may set
	ResponseHeaders  []string // lower-case header names interpret may read
	Receipts         string   // "callback" or "none"
	ConcurrencyLimit int      // 0 means the default
	RatePerSecond    float64  // 0 means unlimited
}

// TakesCallbacks reports whether the adapter takes delivery reports by callback (receipts:
// callback), so that its provider needs a callback verifier; false for a nil adapter.
func (a *Adapter) TakesCallbacks() bool { return a != nil && a.Receipts == "callback" }

// SenderProfile is a package's sender profile with defaults applied.
type SenderProfile struct {
	ID                   string
	Channel              string // email | sms | peer | chat | push
	Provider             string
	FallbackProviders    []string
	Sender               string
	MaximumSegments      int // sms only
	Retry                RetryPolicy
	OnUncertain          string // hold | retry
	AcceptDuplicates     bool
	DefaultExpirySeconds int
}

// RetryPolicy bounds the retries of transient failures.
type RetryPolicy struct {
	MaximumAttempts     int
	InitialDelaySeconds int
	MaximumDelaySeconds int
}

// AccessProfile says who may do what.
type AccessProfile struct {
	ID                 string
	Role               string // sender | operator | receiver
	Clients            []string
	RequiredScopes     []string
	SenderProfiles     []string
	Templates          []string // template ids
	AllowDirectContent bool
	RequestsPerMinute  int
	Burst              int
	DailyLimit         int // 0 means none
	// InboxProviders, for a receiver, are the providers whose inbox entries it may read; nil
	// means every provider (the member left out).
	InboxProviders []string
	// DeviceTokenInEvents, for a sender, puts the device token in the device.unregistered
	// events of its messages (deviceTokenInEvents; left out, they carry none).
	DeviceTokenInEvents bool
}

// TemplateKey names one template version.
type TemplateKey struct {
	ID      string
	Version string
}

// Provider returns the provider with that id, or nil.
func (p *Package) Provider(id string) *Provider {
	if p.providers == nil {
		return find(p.Providers, func(v *Provider) bool { return v.ID == id })
	}
	return p.providers[id]
}

// SenderProfile returns the sender profile with that id, or nil.
func (p *Package) SenderProfile(id string) *SenderProfile {
	if p.senderProfiles == nil {
		return find(p.SenderProfiles, func(v *SenderProfile) bool { return v.ID == id })
	}
	return p.senderProfiles[id]
}

// Template returns one template version, or nil.
func (p *Package) Template(id, version string) *Template {
	if p.templates == nil {
		return find(p.Templates, func(v *Template) bool { return v.ID == id && v.Version == version })
	}
	return p.templates[TemplateKey{ID: id, Version: version}]
}

// AccessProfile returns the access profile with that id, or nil.
func (p *Package) AccessProfile(id string) *AccessProfile {
	if p.accessProfiles == nil {
		return find(p.AccessProfiles, func(v *AccessProfile) bool { return v.ID == id })
	}
	return p.accessProfiles[id]
}

// ProfileForClient returns the one access profile that names an OAuth client id, or nil.
func (p *Package) ProfileForClient(clientID string) *AccessProfile {
	if p.clients == nil {
		return find(p.AccessProfiles, func(v *AccessProfile) bool { return contains(v.Clients, clientID) })
	}
	return p.clients[clientID]
}

// AllowsSenderProfile reports whether the profile lists the sender profile.
func (a *AccessProfile) AllowsSenderProfile(id string) bool { return contains(a.SenderProfiles, id) }

// AllowsTemplate reports whether the profile lists the template id.
func (a *AccessProfile) AllowsTemplate(id string) bool { return contains(a.Templates, id) }

// find returns the first element matching, or nil. It serves Packages built by hand (in
// tests) rather than by Load, whose lookup maps are unset.
func find[T any](list []*T, match func(*T) bool) *T {
	for _, v := range list {
		if match(v) {
			return v
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
