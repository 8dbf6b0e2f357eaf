package packages

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadManifest loads the quickstart with arbitrary bytes as switchboard.yaml: Load must
// never panic, and must either accept the package or explain itself with diagnostics.
func FuzzLoadManifest(f *testing.F) {
	dir := copyQuickstart(f)
	manifest := readFile(f, dir, manifestPath)
	f.Add([]byte(manifest))
	f.Add([]byte(""))
	f.Add([]byte("apiVersion: switchboard/v1\nkind: Package\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("x: &x {a: *x}\nproviders: *x\n"))
	f.Add([]byte("apiVersion: switchboard/v1\nkind: Package\nproviders: [{id: p, kind: http}, {id: p}]\n" +
		"senderProfiles: [{id: s, channel: sms, provider: p, retry: {maximumAttempts: 99999999999999999999}}]\n"))
	f.Add([]byte("---\na: 1\n---\nb: 2\n"))
	f.Add([]byte("providers: !!binary aGVsbG8=\n"))
	f.Add([]byte("templates: [{id: case-update, version: \"1\"}, {id: case-update, version: ../..}]\n"))
	f.Add([]byte("\t- ]]: {{\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, manifestPath), data, 0o644); err != nil {
			t.Fatal(err)
		}
		pkg, err := Load(dir)
		if err == nil {
			if pkg.Digest == "" {
				t.Fatal("accepted package without a digest")
			}
			return
		}
		var le *LoadError
		if !errors.As(err, &le) || len(le.Diagnostics) == 0 {
			t.Fatalf("error %T without diagnostics: %v", err, err)
		}
		for _, d := range le.Diagnostics {
			if d.Code == "" || d.Path == "" || d.Message == "" {
				t.Fatalf("incomplete diagnostic %+v", d)
			}
		}
	})
}

// FuzzRender puts arbitrary JSON through ValidateData and Render of every quickstart template
// in every locale: neither may panic, errors are typed, and data the schema accepts always
// renders (the quickstart's templates and schemas agree).
func FuzzRender(f *testing.F) {
	pkg := mustLoad(f, quickstartDir)
	for _, tm := range pkg.Templates {
		f.Add([]byte(readFile(f, quickstartDir, "templates/"+tm.ID+"/"+tm.Version+"/sample.json")))
	}
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"clinicName": "€€€", "date": "2026-02-29", "time": "24:00"}`))
	f.Add([]byte(`{"clinicName": "x", "date": "2026-10-01", "time": "09:30", "amountDue": 1e400}`))
	f.Add([]byte(`{"caseId": "A", "status": "closed", "updatedAt": "2026-10-01T09:30:00+14:00", "note": "\u0000\u2028"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		data, err := DecodeData(raw)
		if err != nil {
			var de *DataError
			if !errors.As(err, &de) {
				t.Fatalf("DecodeData error %T", err)
			}
			return
		}
		for _, tm := range pkg.Templates {
			valid := tm.ValidateData(data) == nil
			for _, loc := range tm.Locales {
				r, err := tm.Render(loc, data)
				if err != nil {
					var re *RenderError
					if !errors.As(err, &re) || re.Code() == "" {
						t.Fatalf("Render error %T: %v", err, err)
					}
					if valid {
						t.Fatalf("%s/%s %s: valid data refused: %v", tm.ID, tm.Version, loc, err)
					}
					continue
				}
				if len(r.Parts) != len(tm.Parts) {
					t.Fatalf("%d parts rendered, want %d", len(r.Parts), len(tm.Parts))
				}
			}
		}
	})
}
