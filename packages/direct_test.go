package packages

import (
	"errors"
	"strings"
	"testing"
)

func TestCleanPart(t *testing.T) {
	t.Parallel()
	got, err := CleanPart("subject", " Hello\r\nworld\x07 ")
	if err != nil || got != "Hello  world" {
		t.Errorf("subject: %q, %v", got, err)
	}
	got, err = CleanPart("text", "a\x00b\tc\nd\re")
	if err != nil || got != "ab\tc\nde" {
		t.Errorf("text: %q, %v", got, err)
	}
	_, err = CleanPart("text", strings.Repeat("x", limitText+1))
	var re *RenderError
	if !errors.As(err, &re) || re.Code() != CodeContentTooLarge {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := CleanPart("footer", "x"); err == nil {
		t.Error("unknown part accepted")
	}
}
