package runtime

// decodeSigV4 reads the aws-sigv4 authentication: the service and region the signature is
// scoped to (lower-case AWS names such as sns and eu-west-1) and the credentials, each a secret
// reference (the session token is optional, for temporary credentials).
func (r *reader) decodeSigV4(m *mapping, a *HTTPAuth) {
	for _, key := range []string{"service", "region"} {
		text := m.required(key)
		if text != "" && !isAWSName(text) {
			m.fail(key, "must be an AWS %s name: lower-case letters, digits and -, such as sns or eu-west-1", key)
			continue
		}
		if key == "service" {
			a.Service = text
		} else {
			a.Region = text
		}
	}
	a.AccessKeyID = r.textSecret(m, "accessKeyIdRef")
	a.SecretAccessKey = r.textSecret(m, "secretAccessKeyRef")
	if m.has("sessionTokenRef") {
		a.SessionToken = r.textSecret(m, "sessionTokenRef")
	}
}

// isAWSName reports whether s is 1 to 64 lower-case letters, digits and hyphens.
func isAWSName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
