package packages

import (
	"errors"
	"strings"
	"testing"
)

func TestCleanPart(t *testing.T) {
	t.Parallel()
	got, err := CleanPart("email", "subject", " Hello\r\nworld\x07 ")
	if err != nil || got != "Hello  world" {
		t.Errorf("subject: %q, %v", got, err)
	}
	got, err = CleanPart("sms", "text", "a\x00b\tc\nd\re")
	if err != nil || got != "ab\tc\nde" {
		t.Errorf("text: %q, %v", got, err)
	}
	_, err = CleanPart("sms", "text", strings.Repeat("x", limitText+1))
	var re *RenderError
	if !errors.As(err, &re) || re.Code() != CodeContentTooLarge {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := CleanPart("email", "footer", "x"); err == nil {
		t.Error("unknown part accepted")
	}
	got, err = CleanPart("push", "title", "Case\nclosed\x07")
	if err != nil || got != "Case closed" {
		t.Errorf("push title: %q, %v", got, err)
	}
	if _, err := CleanPart("push", "body", strings.Repeat("x", limitPushBody+1)); !errors.As(err, &re) || re.Code() != CodeContentTooLarge {
		t.Errorf("push body over 4 KiB: %v", err)
	}
	if _, err := CleanPart("push", "text", "x"); err == nil {
		t.Error("a push text part accepted")
	}
}
