package packages

import (
	"encoding/json"
	"errors"
	"strconv"
)

// Push part limits (docs/package.md, "Templates"), in bytes. Both gateways cap a whole
// notification at 4 KiB, so the body and the data stay within that.
const (
	limitPushTitle = 512
	limitPushBody  = 4 << 10
	// LimitPushData bounds a push message's data part: its JSON text, in bytes.
	LimitPushData = 4 << 10
)

// Why a push data part is refused; CheckPushData's errors wrap one of them.
var (
	// ErrPushDataShape: the data is not one JSON object whose values are all strings.
	ErrPushDataShape = errors.New("must be one JSON object whose values are strings")
	// ErrPushDataTooLarge: the data's JSON text is longer than LimitPushData.
	ErrPushDataTooLarge = errors.New("is over its limit of " + strconv.Itoa(LimitPushData) + " bytes")
)

// CheckPushData checks a push message's data part, rendered or submitted as direct content: at
// most LimitPushData bytes of JSON that decode to an object of string values (an adapter sends
// it as the gateway's data map, which takes strings only). Its error is ErrPushDataShape or
// ErrPushDataTooLarge, whose text names no value, for the caller to prefix with the member.
func CheckPushData(s string) error {
	if len(s) > LimitPushData {
		return ErrPushDataTooLarge
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return ErrPushDataShape
	}
	return nil
}

// pushDataRefusal is the RenderError of a push template whose data part CheckPushData refuses.
func pushDataRefusal(locale string, err error) *RenderError {
	code := CodeRenderRefused
	if errors.Is(err, ErrPushDataTooLarge) {
		code = CodeContentTooLarge
	}
	return &RenderError{code: code, Part: "data", Locale: locale,
		Message: "data part (locale " + locale + "): the rendered data " + err.Error()}
}
