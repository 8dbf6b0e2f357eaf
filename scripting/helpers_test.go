package scripting

import (
	"strconv"
	"strings"
	"testing"
)

func TestHostHelpersKnownVectors(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		// RFC 4648 §10 and friends.
		{"encoding.base64.encode('')", ""},
		{"encoding.base64.encode('f')", "Zg=="},
		{"encoding.base64.encode('foobar')", "Zm9vYmFy"},
		{"encoding.base64.encode('hello')", "aGVsbG8="},
		{"encoding.base64.encode('é')", "w6k="},
		{"encoding.base64.decode('aGVsbG8=')", "hello"},
		{"encoding.base64.decode('aGVsbG8')", "hello"},
		{"encoding.base64.decode('w6k=')", "é"},
		{"encoding.base64.encode('subjects?_d')", "c3ViamVjdHM/X2Q="},
		{"encoding.base64url.encode('subjects?_d')", "c3ViamVjdHM_X2Q"},
		{"encoding.base64url.decode('c3ViamVjdHM_X2Q')", "subjects?_d"},
		{"encoding.base64url.decode('c3ViamVjdHM_X2Q=')", "subjects?_d"},
		{"encoding.hex.encode('hi €')", "686920e282ac"},
		{"encoding.hex.decode('686920E282AC')", "hi €"},
		{"encoding.hex.encode('\\ud800')", "efbfbd"}, // a lone surrogate encodes as U+FFFD
		// FIPS 180 test vectors.
		{"crypto.sha256('')", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"crypto.sha256('abc')", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"crypto.sha256('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
		{"crypto.sha1('abc')", "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{"crypto.sha1('')", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
		// RFC 4231 test case 2 and the common "quick brown fox" vector.
		{"crypto.hmacSha256('Jefe', 'what do ya want for nothing?')", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{"crypto.hmacSha256('key', 'The quick brown fox jumps over the lazy dog')", "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
	}
	src := "function f(i) {\n\tswitch (i) {\n"
	for i, tt := range tests {
		src += "\tcase " + strconv.Itoa(i) + ": return " + tt.expr + ";\n"
	}
	src += "\t}\n}"
	p := newProgram(t, src, []string{"f"})
	for i, tt := range tests {
		if got := mustCall(t, p, "f", i); got != jsonString(tt.want) {
			t.Errorf("%s = %s, want %q", tt.expr, got, tt.want)
		}
	}
}

func TestHostHelpersRefuseBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{"encoding.base64.encode(42)", "TypeError: encoding.base64.encode: the text must be a string"},
		{"encoding.base64.encode()", "TypeError: encoding.base64.encode: the text must be a string"},
		{"encoding.base64.decode('!!!')", "TypeError: encoding.base64.decode: the input is not well-formed"},
		{"encoding.base64url.decode('a+b/')", "TypeError: encoding.base64url.decode: the input is not well-formed"},
		{"encoding.hex.decode('abc')", "TypeError: encoding.hex.decode: the input is not well-formed"},
		{"encoding.hex.decode('ff')", "TypeError: encoding.hex.decode: the decoded bytes are not valid UTF-8 text"},
		{"crypto.sha1({})", "TypeError: crypto.sha1: data must be a string"},
		{"crypto.hmacSha256('key')", "TypeError: crypto.hmacSha256: data must be a string"},
		{"crypto.hmacSha256(null, 'data')", "TypeError: crypto.hmacSha256: the key must be a string"},
		{"encoding.base64.encode('x'.repeat(1 << 20))", "RangeError: encoding.base64.encode"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			p := newProgram(t, "function f() { return "+tt.expr+" }", []string{"f"})
			if _, err := call(t, p, "f"); ClassOf(err) != ClassFailed || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestHostHelpersAreFrozenFunctions(t *testing.T) {
	t.Parallel()
	p := newProgram(t, `function f() {
	return [
		Object.isFrozen(encoding), Object.isFrozen(encoding.base64), Object.isFrozen(crypto), Object.isFrozen(console),
		Object.isFrozen(crypto.sha256), typeof crypto.hmacSha256, crypto.hmacSha256.name, crypto.hmacSha256.length,
		Object.keys(encoding).join(), Object.keys(crypto).join(), Object.keys(console).join(),
	];
}`, []string{"f"})
	want := `[true,true,true,true,true,"function","hmacSha256",2,"base64,base64url,hex","hmacSha256,sha1,sha256","error,log,warn"]`
	if got := mustCall(t, p, "f"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
