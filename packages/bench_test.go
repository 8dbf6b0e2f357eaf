package packages

import "testing"

// BenchmarkValidateAndRender measures the submission hot path: validating data against a
// template's schema and rendering it (data already decoded, as the API hands it over).
func BenchmarkValidateAndRender(b *testing.B) {
	pkg := mustLoad(b, quickstartDir)
	for _, c := range []struct{ name, id, locale string }{
		{"sms", "appointment-reminder-sms", "en"},
		{"email", "appointment-reminder", "en"},
		{"peer", "case-update", "en"},
	} {
		tm := pkg.Template(c.id, "1")
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := tm.ValidateData(tm.Sample); err != nil {
					b.Fatal(err)
				}
				if _, err := tm.Render(c.locale, tm.Sample); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	raw := []byte(readFile(b, quickstartDir, "templates/appointment-reminder-sms/1/sample.json"))
	sms := pkg.Template("appointment-reminder-sms", "1")
	b.Run("sms-with-decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, err := DecodeData(raw)
			if err != nil {
				b.Fatal(err)
			}
			if err := sms.ValidateData(data); err != nil {
				b.Fatal(err)
			}
			if _, err := sms.Render("en", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
