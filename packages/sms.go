package packages

import (
	"strconv"
	"unicode/utf8"
)

// SMS encodings and segment sizes (3GPP TS 23.038 and 23.040).
const (
	EncodingGSM7 = "gsm7"
	EncodingUCS2 = "ucs2"

	gsm7Single = 160 // units in a single-segment GSM-7 message
	gsm7Multi  = 153 // units per segment of a concatenated GSM-7 message
	ucs2Single = 70  // UTF-16 code units in a single-segment UCS-2 message
	ucs2Multi  = 67  // UTF-16 code units per segment of a concatenated UCS-2 message
)

// gsm7Basic is the GSM 03.38 default alphabet (one unit each), without the escape code.
const gsm7Basic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
	"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"

// gsm7Extension is the GSM 03.38 extension table (two units each: escape and the character).
const gsm7Extension = "\f^{}\\[~]|€"

// gsm7Units returns the GSM-7 units of one character, or 0 when GSM-7 cannot carry it. It is
// a switch rather than a scan of the tables above (a test checks that they agree).
func gsm7Units(r rune) int {
	switch {
	case r == '\n' || r == '\r':
		return 1
	case r == '\f':
		return 2
	case r < 0x20 || r == '`' || r == 0x7F:
		return 0
	case r >= '[' && r <= '^', r >= '{' && r <= '~':
		return 2
	case r < utf8.RuneSelf:
		return 1
	}
	switch r {
	case '£', '¥', 'è', 'é', 'ù', 'ì', 'ò', 'Ç', 'Ø', 'ø', 'Å', 'å', 'Δ', 'Φ', 'Γ', 'Λ', 'Ω', 'Π', 'Ψ',
		'Σ', 'Θ', 'Ξ', 'Æ', 'æ', 'ß', 'É', '¤', '¡', 'Ä', 'Ö', 'Ñ', 'Ü', '§', '¿', 'ä', 'ö', 'ñ', 'ü', 'à':
		return 1
	case '€':
		return 2
	}
	return 0
}

// CountSMS reports how an SMS text travels: GSM-7 when every character is in the GSM 03.38
// default alphabet or its extension table (extension characters ^ { } \ [ ~ ] | € and form feed
// count 2 units), otherwise UCS-2 counted in UTF-16 code units (a character outside the Basic
// Multilingual Plane, such as an emoji, counts 2). Segments: GSM-7 fits 160 units in one
// segment and 153 per segment when concatenated; UCS-2 fits 70 and 67. An empty text is one
// segment. Segment boundaries are computed by units only (a real gateway may move an escape
// pair or a surrogate pair to the next segment).
func CountSMS(text string) SMSInfo {
	units, gsm := 0, true
	for _, r := range text {
		u := gsm7Units(r)
		if u == 0 {
			gsm = false
			break
		}
		units += u
	}
	if gsm {
		return SMSInfo{Encoding: EncodingGSM7, Units: units, Segments: segments(units, gsm7Single, gsm7Multi)}
	}
	units = 0
	for _, r := range text {
		if r >= 0x10000 {
			units += 2
		} else {
			units++
		}
	}
	return SMSInfo{Encoding: EncodingUCS2, Units: units, Segments: segments(units, ucs2Single, ucs2Multi)}
}

func segments(units, single, multi int) int {
	if units <= single {
		return 1
	}
	return (units + multi - 1) / multi
}

// CheckSegments returns a *RenderError with code content.too-many-segments when the text
// needs more segments than max allows, nil otherwise (and always nil when max < 1, which
// means no limit).
func CheckSegments(info SMSInfo, max int) error {
	if max < 1 || info.Segments <= max {
		return nil
	}
	return &RenderError{
		code: CodeTooManySegments,
		Part: "text",
		Message: "the SMS text needs " + strconv.Itoa(info.Segments) + " segments (" + info.Encoding + ", " +
			strconv.Itoa(info.Units) + " units); the sender profile allows " + strconv.Itoa(max),
	}
}
