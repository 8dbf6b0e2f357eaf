package runtime

import (
	"net"
	"strconv"
	"strings"
)

// decodeEnvelope checks apiVersion and kind.
func (r *reader) decodeEnvelope(doc *mapping) {
	if v := doc.required("apiVersion"); v != "" && v != APIVersion {
		doc.fail("apiVersion", "must be %s", APIVersion)
	}
	if v := doc.required("kind"); v != "" && v != Kind {
		doc.fail("kind", "must be %s", Kind)
	}
}

// decodeSecrets reads `secrets`: which secret references are enabled. It runs before every
// member that holds a reference.
func (r *reader) decodeSecrets(doc *mapping) secretSources {
	m := doc.child("secrets", "file", "env")
	var s secretSources
	if m.has("file") {
		s.fileDeclared = true
		s.fileRoot = r.folder(m.child("file", "root"), "root")
	}
	if _, present := m.vals["env"]; present {
		m.child("env") // closed and empty: `env: {}`
		s.env = true
	}
	return s
}

// decodePackage reads `package`.
func (r *reader) decodePackage(doc *mapping) PackageRef {
	if !doc.has("package") {
		doc.fail("package", "is required")
		return PackageRef{}
	}
	m := doc.child("package", "root", "expectedDigest")
	p := PackageRef{Root: r.folder(m, "root")}
	if d := m.str("expectedDigest"); d != "" {
		if !isDigest(d) {
			m.fail("expectedDigest", "must be sha256: and 64 lower-case hex digits")
		} else {
			p.ExpectedDigest = d
		}
	}
	return p
}

// isDigest reports whether s is "sha256:" and 64 lower-case hex digits.
func isDigest(s string) bool {
	hex, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if c := hex[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// decodeListen reads `listen`.
func (r *reader) decodeListen(doc *mapping) Listen {
	m := doc.child("listen", "api", "metrics", "tls", "trustedProxies")
	l := Listen{API: DefaultAPIListen, Metrics: DefaultMetricsListen}
	if text, _, _, ok := m.scalar("api"); ok {
		if checkListenAddr(m, "api", text) {
			l.API = text
		}
	}
	if text, _, _, ok := m.scalar("metrics"); ok {
		// An explicit empty string turns the metrics listener off.
		if text == "" || checkListenAddr(m, "metrics", text) {
			l.Metrics = text
		}
	}
	if l.Metrics != "" && l.Metrics == l.API && !strings.HasSuffix(l.API, ":0") {
		m.fail("metrics", "must differ from listen.api")
	}
	l.TLS = r.decodeListenTLS(m)
	l.TrustedProxies = r.decodeTrustedProxies(m)
	return l
}

// checkListenAddr checks a host:port listener address; port 0 asks for a free port.
func checkListenAddr(m *mapping, key, addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	ok := err == nil
	if ok {
		_, perr := strconv.ParseUint(port, 10, 16)
		ok = perr == nil && (host == "" || net.ParseIP(host) != nil || isHostname(host))
	}
	if !ok {
		m.fail(key, "must be host:port with a port from 0 to 65535")
	}
	return ok
}

// decodeDatabase reads `database`.
func (r *reader) decodeDatabase(doc *mapping) Database {
	if !doc.has("database") {
		doc.fail("database", "is required")
		return Database{}
	}
	m := doc.child("database", "driver", "path", "urlRef", "synchronous")
	var db Database
	switch driver := m.required("driver"); driver {
	case "":
	case "sqlite":
		db.Driver = driver
		if p := m.required("path"); p != "" {
			db.Path = r.abs(p)
		}
		if m.has("urlRef") {
			m.fail("urlRef", "applies to driver postgres only")
		}
		db.Synchronous = "NORMAL"
		switch s := m.str("synchronous"); strings.ToLower(s) {
		case "", "normal":
		case "full":
			db.Synchronous = "FULL"
		default:
			m.fail("synchronous", "must be normal or full")
		}
	case "postgres":
		db.Driver = driver
		db.URL = r.textSecret(m, "urlRef")
		for _, key := range []string{"path", "synchronous"} {
			if m.has(key) {
				m.fail(key, "applies to driver sqlite only")
			}
		}
	default:
		m.fail("driver", "must be sqlite or postgres")
	}
	return db
}

// decodeAudit reads `audit`.
func (r *reader) decodeAudit(doc *mapping) Audit {
	if !doc.has("audit") {
		doc.fail("audit", "is required")
		return Audit{}
	}
	m := doc.child("audit", "keyRef")
	a := Audit{Key: m.secret("keyRef", true)}
	if !a.Key.IsZero() && len(a.Key.value) < 32 {
		m.fail("keyRef", "the audit key must be at least 32 bytes")
		a.Key = Secret{}
	}
	return a
}

// decodeDispatch reads `dispatch`; every value is a positive integer.
func (r *reader) decodeDispatch(doc *mapping) Dispatch {
	m := doc.child("dispatch", "concurrency", "batchSize", "maxPayloadBytes",
		"pollIntervalMilliseconds", "leaseSeconds")
	def := DefaultDispatch()
	return Dispatch{
		Concurrency:              int(m.integer("concurrency", int64(def.Concurrency), 1, 10000)),
		BatchSize:                int(m.integer("batchSize", int64(def.BatchSize), 1, 100000)),
		MaxPayloadBytes:          m.integer("maxPayloadBytes", def.MaxPayloadBytes, 1, 1<<40),
		PollIntervalMilliseconds: int(m.integer("pollIntervalMilliseconds", int64(def.PollIntervalMilliseconds), 1, 3600000)),
		LeaseSeconds:             int(m.integer("leaseSeconds", int64(def.LeaseSeconds), 1, 86400)),
	}
}

// decodeRetention reads `retention`; recordDays may not be below payloadDays.
func (r *reader) decodeRetention(doc *mapping) Retention {
	m := doc.child("retention", "payloadDays", "recordDays", "submissionReceiptDays", "eventDays")
	def := DefaultRetention()
	ret := Retention{
		PayloadDays:           int(m.integer("payloadDays", int64(def.PayloadDays), 1, 36500)),
		RecordDays:            int(m.integer("recordDays", int64(def.RecordDays), 1, 36500)),
		SubmissionReceiptDays: int(m.integer("submissionReceiptDays", int64(def.SubmissionReceiptDays), 1, 36500)),
		EventDays:             int(m.integer("eventDays", int64(def.EventDays), 1, 36500)),
	}
	if ret.RecordDays < ret.PayloadDays {
		m.fail("recordDays", "must be at least retention.payloadDays")
	}
	return ret
}

// decodeSandbox reads `sandbox`: each member may lower its built-in limit, never raise it.
func (r *reader) decodeSandbox(doc *mapping) Sandbox {
	m := doc.child("sandbox", "sourceBytes", "stringBytes", "prepareMilliseconds",
		"interpretMilliseconds", "receiptMilliseconds", "callStackFrames")
	spec := DefaultSandbox()
	lower := func(key string, limit int) int {
		v := m.integer(key, int64(limit), 1, 1<<31-1)
		if v > int64(limit) {
			m.fail(key, "may only lower the built-in limit of %d, never raise it", limit)
			return limit
		}
		return int(v)
	}
	return Sandbox{
		SourceBytes:           lower("sourceBytes", spec.SourceBytes),
		StringBytes:           lower("stringBytes", spec.StringBytes),
		PrepareMilliseconds:   lower("prepareMilliseconds", spec.PrepareMilliseconds),
		InterpretMilliseconds: lower("interpretMilliseconds", spec.InterpretMilliseconds),
		ReceiptMilliseconds:   lower("receiptMilliseconds", spec.ReceiptMilliseconds),
		CallStackFrames:       lower("callStackFrames", spec.CallStackFrames),
	}
}
