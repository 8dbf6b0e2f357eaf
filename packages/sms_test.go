package packages

import (
	"errors"
	"strings"
	"testing"
)

func TestCountSMS(t *testing.T) {
	t.Parallel()
	r := strings.Repeat
	cases := []struct {
		name string
		text string
		want SMSInfo
	}{
		{"empty", "", SMSInfo{EncodingGSM7, 0, 1}},
		{"basic", "Hello @ £5, ¿ok? ÄÖÑÜ§ äöñüà ΔΦΓΛΩΠΨΣΘΞ ÆæßÉ\r\n", SMSInfo{EncodingGSM7, 46, 1}},
		{"extension chars count 2", "^{}\\[~]|€\f", SMSInfo{EncodingGSM7, 20, 1}},
		{"exactly 160", r("a", 160), SMSInfo{EncodingGSM7, 160, 1}},
		{"161 is two segments of 153", r("a", 161), SMSInfo{EncodingGSM7, 161, 2}},
		{"306 fits two segments", r("a", 306), SMSInfo{EncodingGSM7, 306, 2}},
		{"307 needs three", r("a", 307), SMSInfo{EncodingGSM7, 307, 3}},
		{"80 extension chars are 160 units", r("€", 80), SMSInfo{EncodingGSM7, 160, 1}},
		{"one extension char over", r("a", 159) + "€", SMSInfo{EncodingGSM7, 161, 2}},
		{"non-GSM accent forces UCS-2", "Crème brûlée", SMSInfo{EncodingUCS2, 12, 1}},
		{"tab is not GSM-7", "a\tb", SMSInfo{EncodingUCS2, 3, 1}},
		{"backtick is not GSM-7", "`", SMSInfo{EncodingUCS2, 1, 1}},
		{"UCS-2 exactly 70", r("ж", 70), SMSInfo{EncodingUCS2, 70, 1}},
		{"UCS-2 71 is two segments of 67", r("ж", 71), SMSInfo{EncodingUCS2, 71, 2}},
		{"UCS-2 134 fits two", r("ж", 134), SMSInfo{EncodingUCS2, 134, 2}},
		{"UCS-2 135 needs three", r("ж", 135), SMSInfo{EncodingUCS2, 135, 3}},
		{"emoji is two UTF-16 units", "Hi 😀", SMSInfo{EncodingUCS2, 5, 1}},
		{"35 emoji are 70 units", r("😀", 35), SMSInfo{EncodingUCS2, 70, 1}},
		{"36 emoji are 72 units", r("😀", 36), SMSInfo{EncodingUCS2, 72, 2}},
		{"extension chars count 1 in UCS-2", "€ж", SMSInfo{EncodingUCS2, 2, 1}},
	}
	for _, c := range cases {
		if got := CountSMS(c.text); got != c.want {
			t.Errorf("%s: CountSMS = %+v, want %+v", c.name, got, c.want)
		}
	}
}

// The switch in gsm7Units must agree with the GSM 03.38 tables written out in sms.go.
func TestGSM7UnitsMatchTables(t *testing.T) {
	t.Parallel()
	if n := len([]rune(gsm7Basic)); n != 127 {
		t.Fatalf("basic table has %d characters, want 127 (128 less the escape code)", n)
	}
	want := map[rune]int{}
	for _, c := range gsm7Basic {
		want[c] = 1
	}
	for _, c := range gsm7Extension {
		want[c] = 2
	}
	for r := rune(0); r < 0x3000; r++ {
		if got := gsm7Units(r); got != want[r] {
			t.Errorf("gsm7Units(%U %q) = %d, want %d", r, r, got, want[r])
		}
	}
	if gsm7Units('€') != 2 || gsm7Units('😀') != 0 {
		t.Error("euro or emoji misclassified")
	}
}

func TestCheckSegments(t *testing.T) {
	t.Parallel()
	info := CountSMS(strings.Repeat("a", 400)) // 3 segments
	if err := CheckSegments(info, 3); err != nil {
		t.Errorf("3 of 3: %v", err)
	}
	if err := CheckSegments(info, 0); err != nil {
		t.Errorf("no limit: %v", err)
	}
	err := CheckSegments(info, 2)
	var re *RenderError
	if !errors.As(err, &re) || re.Code() != CodeTooManySegments {
		t.Fatalf("3 of 2: %v", err)
	}
	if !strings.Contains(re.Message, "3 segments") || !strings.Contains(re.Message, "allows 2") {
		t.Errorf("message %q", re.Message)
	}
}
