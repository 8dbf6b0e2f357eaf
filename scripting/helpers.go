package scripting

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// The host helpers (docs/adapters.md). Every helper takes and returns strings; bytes are always the
// UTF-8 encoding of a string (a lone surrogate encodes as U+FFFD):
//
//	encoding.base64.encode(text)     base64 (RFC 4648 §4, padded) of text's UTF-8 bytes
//	encoding.base64.decode(b64)      the text whose UTF-8 bytes b64 encodes; padding optional
//	encoding.base64url.encode(text)  base64url (RFC 4648 §5) WITHOUT padding, as JOSE uses it
//	encoding.base64url.decode(b64)   the text; padding optional
//	encoding.hex.encode(text)        lower-case hex of text's UTF-8 bytes
//	encoding.hex.decode(hex)         the text; either case accepted
//	crypto.sha256(data)              lower-case hex SHA-256 of data's UTF-8 bytes
//	crypto.sha1(data)                lower-case hex SHA-1 of data's UTF-8 bytes
//	crypto.hmacSha256(key, data)     lower-case hex HMAC-SHA256, key and data as UTF-8 bytes
//
// A decode whose bytes are not valid UTF-8 throws a TypeError rather than returning a
// corrupted string; so does malformed input and any argument that is not a string. Results
// longer than Limits.StringBytes throw a RangeError.

// installHelpers puts encoding, crypto and console on the global object; the lockdown
// program freezes them with the built-ins.
func (sb *sandbox) installHelpers() {
	vm := sb.vm
	obj := func(members map[string]any) *goja.Object {
		o := vm.NewObject()
		for _, name := range slices.Sorted(maps.Keys(members)) {
			o.DefineDataProperty(name, vm.ToValue(members[name]), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		}
		return o
	}
	codec := func(name string, enc func([]byte) string, dec func(string) ([]byte, error)) *goja.Object {
		return obj(map[string]any{
			"encode": sb.namedNative("encode", 1, sb.encoder("encoding."+name+".encode", enc)),
			"decode": sb.namedNative("decode", 1, sb.decoder("encoding."+name+".decode", dec)),
		})
	}
	encoding := obj(map[string]any{
		"base64":    codec("base64", base64.StdEncoding.EncodeToString, decodeBase64(base64.StdEncoding)),
		"base64url": codec("base64url", base64.RawURLEncoding.EncodeToString, decodeBase64(base64.RawURLEncoding)),
		"hex":       codec("hex", hex.EncodeToString, hex.DecodeString),
	})
	crypto := obj(map[string]any{
		"sha256":     sb.namedNative("sha256", 1, sb.digest("crypto.sha256", sha256.New)),
		"sha1":       sb.namedNative("sha1", 1, sb.digest("crypto.sha1", sha1.New)),
		"hmacSha256": sb.namedNative("hmacSha256", 2, sb.hmacSha256),
	})
	console := obj(map[string]any{
		"log":   sb.namedNative("log", 0, sb.consoleMethod(levelLog)),
		"warn":  sb.namedNative("warn", 0, sb.consoleMethod(levelWarn)),
		"error": sb.namedNative("error", 0, sb.consoleMethod(levelError)),
	})
	global := vm.GlobalObject()
	global.DefineDataProperty("encoding", encoding, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	global.DefineDataProperty("crypto", crypto, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	global.DefineDataProperty("console", console, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
}

// stringArg returns argument i as a Go string, throwing a TypeError when it is not a string.
func (sb *sandbox) stringArg(call goja.FunctionCall, what string, i int, name string) string {
	v := call.Argument(i)
	if !goja.IsString(v) {
		sb.throwType("%s: %s must be a string", what, name)
	}
	return v.String()
}

// encoder builds an encode helper.
func (sb *sandbox) encoder(what string, enc func([]byte) string) func(goja.FunctionCall, *goja.Runtime) goja.Value {
	return func(call goja.FunctionCall, vm *goja.Runtime) goja.Value {
		text := sb.stringArg(call, what, 0, "the text")
		// base64 grows 4/3, hex 2x: bound the result before building it.
		sb.checkString(what, float64(2*len(text)))
		return vm.ToValue(enc([]byte(text)))
	}
}

// decoder builds a decode helper.
func (sb *sandbox) decoder(what string, dec func(string) ([]byte, error)) func(goja.FunctionCall, *goja.Runtime) goja.Value {
	return func(call goja.FunctionCall, vm *goja.Runtime) goja.Value {
		data, err := dec(sb.stringArg(call, what, 0, "the encoded text"))
		if err != nil {
			sb.throwType("%s: the input is not well-formed", what)
		}
		if !utf8.Valid(data) {
			sb.throwType("%s: the decoded bytes are not valid UTF-8 text", what)
		}
		return vm.ToValue(string(data))
	}
}

// decodeBase64 decodes with enc, with or without padding.
func decodeBase64(enc *base64.Encoding) func(string) ([]byte, error) {
	return func(s string) ([]byte, error) {
		return enc.WithPadding(base64.NoPadding).DecodeString(strings.TrimRight(s, "="))
	}
}

// digest builds a hash helper.
func (sb *sandbox) digest(what string, h func() hash.Hash) func(goja.FunctionCall, *goja.Runtime) goja.Value {
	return func(call goja.FunctionCall, vm *goja.Runtime) goja.Value {
		d := h()
		d.Write([]byte(sb.stringArg(call, what, 0, "data")))
		return vm.ToValue(hex.EncodeToString(d.Sum(nil)))
	}
}

// hmacSha256 is crypto.hmacSha256(key, data).
func (sb *sandbox) hmacSha256(call goja.FunctionCall, vm *goja.Runtime) goja.Value {
	const what = "crypto.hmacSha256"
	key := sb.stringArg(call, what, 0, "the key")
	data := sb.stringArg(call, what, 1, "data")
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(data))
	return vm.ToValue(hex.EncodeToString(m.Sum(nil)))
}
