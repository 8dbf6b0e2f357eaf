package engine

import (
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// e164 is a plus sign, a non-zero country digit and up to 14 more digits.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// Recipient is the submission's `to` member: exactly one of its fields is set.
type Recipient struct {
	Email string `json:"email,omitempty"`
	Phone string `json:"phone,omitempty"`
	Peer  string `json:"peer,omitempty"`
	// Address is a chat gateway's own address of the recipient (a channel id, a chat id).
	Address string `json:"address,omitempty"`
	// Device is a push gateway's registration token of the recipient's app on one device.
	Device string `json:"device,omitempty"`
}

// Recipient kinds: the member of `to` that a channel needs, and what a message record keeps.
const (
	RecipientEmail   = "email"
	RecipientPhone   = "phone"
	RecipientPeer    = "peer"
	RecipientAddress = "address"
	RecipientDevice  = "device"
)

// Bounds of the gateways' own recipient forms, in characters.
const (
	// MaxChatAddressChars bounds a chat address.
	MaxChatAddressChars = 256
	// MaxDeviceTokenChars bounds a push device token (FCM's are about 160 characters, APNs'
	// 64 hexadecimal digits; the bound leaves room for what gateways may issue later).
	MaxDeviceTokenChars = 4096
)

// Kind returns "email", "phone", "peer", "address" or "device", and the address. It fails
// unless exactly one is set.
func (r Recipient) Kind() (kind, address string, err error) {
	n := 0
	for _, v := range []string{r.Email, r.Phone, r.Peer, r.Address, r.Device} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return "", "", fmt.Errorf("to must have exactly one of email, phone, peer, address or device")
	}
	switch {
	case r.Device != "":
		return RecipientDevice, r.Device, nil
	case r.Email != "":
		return RecipientEmail, r.Email, nil
	case r.Phone != "":
		return RecipientPhone, r.Phone, nil
	case r.Address != "":
		return RecipientAddress, r.Address, nil
	}
	return RecipientPeer, r.Peer, nil
}

// RecipientKindFor is the recipient kind a channel needs.
func RecipientKindFor(ch Channel) string {
	switch ch {
	case ChannelEmail:
		return RecipientEmail
	case ChannelSMS:
		return RecipientPhone
	case ChannelChat:
		return RecipientAddress
	case ChannelPush:
		return RecipientDevice
	}
	return RecipientPeer
}

// CheckAddress checks an address's form for its kind. The error never repeats the address.
func CheckAddress(kind, address string) error {
	switch kind {
	case "email":
		if len(address) > 254 || strings.ContainsAny(address, "\r\n<>") {
			return fmt.Errorf("to.email is not a plain email address")
		}
		a, err := mail.ParseAddress(address)
		if err != nil || a.Address != address || a.Name != "" {
			return fmt.Errorf("to.email is not a plain email address")
		}
		return nil
	case "phone":
		if !e164.MatchString(address) {
			return fmt.Errorf("to.phone is not an E.164 number (+ and 7 to 15 digits)")
		}
		return nil
	case "peer":
		if !ValidPeerID(address) {
			return fmt.Errorf("to.peer is not a libp2p peer id")
		}
		return nil
	case RecipientAddress:
		if !ValidChatAddress(address) {
			return fmt.Errorf("to.address must be 1 to %d printable characters", MaxChatAddressChars)
		}
		return nil
	case RecipientDevice:
		if !printableWithin(address, MaxDeviceTokenChars) {
			return fmt.Errorf("to.device must be 1 to %d printable characters (no control characters or line breaks)", MaxDeviceTokenChars)
		}
		return nil
	}
	return fmt.Errorf("unknown recipient kind")
}

// ValidChatAddress reports whether s is a chat address: valid UTF-8, 1 to 256 characters, each
// printable (letters, marks, numbers, punctuation, symbols and the ASCII space; no control,
// format or other white-space characters). Gateways' own ids (C0123ABCD, -1001234567890,
// 19:abc@thread.tacv2) all pass; what a gateway accepts beyond that is its to say.
func ValidChatAddress(s string) bool { return printableWithin(s, MaxChatAddressChars) }

// printableWithin reports whether s is valid UTF-8 of 1 to limit characters, each printable as
// unicode.IsPrint says (the ASCII space is the only white space it allows).
func printableWithin(s string, limit int) bool {
	if s == "" || len(s) > limit*utf8.UTFMax || !utf8.ValidString(s) {
		return false
	}
	n := 0
	for _, r := range s {
		n++
		if n > limit || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// ValidPeerID reports whether s is a libp2p peer id in its base58btc form: a multihash that is
// either an identity hash of a small public key (12D3KooW… for Ed25519) or a SHA2-256 hash
// (Qm…). It is written here, not taken from libp2p, because only providers/peer may import
// libp2p and the engine must check recipients at submission.
func ValidPeerID(s string) bool {
	if len(s) < 2 || len(s) > 128 {
		return false
	}
	b, ok := decodeBase58(s)
	if !ok || len(b) < 2 {
		return false
	}
	code, n := uvarint(b)
	if n <= 0 {
		return false
	}
	length, m := uvarint(b[n:])
	if m <= 0 || int(length) != len(b)-n-m {
		return false
	}
	switch code {
	case 0x00: // identity: the key itself, at most 42 bytes
		return length > 0 && length <= 42
	case 0x12: // sha2-256
		return length == 32
	}
	return false
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

func decodeBase58(s string) ([]byte, bool) {
	out := []byte{0}
	for _, c := range []byte(s) {
		v := strings.IndexByte(base58Alphabet, c)
		if v < 0 {
			return nil, false
		}
		carry := v
		for i := len(out) - 1; i >= 0; i-- {
			carry += int(out[i]) * 58
			out[i] = byte(carry)
			carry >>= 8
		}
		for carry > 0 {
			out = append([]byte{byte(carry)}, out...)
			carry >>= 8
		}
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	for len(out) > 0 && out[0] == 0 {
		out = out[1:]
	}
	return append(make([]byte, zeros), out...), true
}

func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i, c := range b {
		if i == 9 {
			return 0, -1
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}
