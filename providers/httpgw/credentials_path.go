package httpgw

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// pathTokenCredential writes prefix+token as the first path segment under the baseUrl of
// every request: https://api.telegram.org/ with prefix "bot" sends sendMessage to
// https://api.telegram.org/bot<token>/sendMessage. prepare never sees it (its target stays
// relative to the baseUrl), and transport reasons leave the URL out.
type pathTokenCredential struct {
	basePath string // the baseUrl's escaped path, ending with "/"
	segment  string // prefix + token, characters a path segment holds as they are
}

// newPathTokenCredential checks the segment: the runtime loader refuses anything that would
// need escaping, and so does this.
func newPathTokenCredential(auth Auth, base *url.URL) (credential, error) {
	seg := auth.Prefix + auth.Token
	if auth.Token == "" || len(seg) > 320 || strings.ContainsAny(seg, "/?#%\\ ") {
		return nil, errors.New("path-token: the token is empty or not a URL path segment")
	}
	if seg != (&url.URL{Path: seg}).EscapedPath() {
		return nil, errors.New("path-token: the token holds characters a URL path segment must escape")
	}
	return pathTokenCredential{basePath: base.EscapedPath(), segment: seg}, nil
}

func (pathTokenCredential) apply(context.Context, http.Header) (string, error) { return "", nil }

func (pathTokenCredential) rejected(string) {}

func (pathTokenCredential) ownedHeaders() []string { return nil }

// sign inserts the segment after the baseUrl's path. The target was resolved under the
// baseUrl, so the request's path starts with it. The target "./" (the baseUrl itself) makes the
// segment the path's last one, without a trailing "/": for a webhook URL whose last segment is
// the secret (a Microsoft Teams incoming webhook).
func (c pathTokenCredential) sign(r *http.Request, _ []byte) error {
	esc := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(esc, c.basePath)
	if !ok {
		return errors.New("path-token: the request path is not under the baseUrl")
	}
	esc = c.basePath + c.segment
	if rest != "" {
		esc += "/" + rest
	}
	path, err := url.PathUnescape(esc)
	if err != nil {
		return errors.New("path-token: the request path does not unescape")
	}
	r.URL.Path, r.URL.RawPath = path, esc
	return nil
}

var _ requestSigner = pathTokenCredential{}
