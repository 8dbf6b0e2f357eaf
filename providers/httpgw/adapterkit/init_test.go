package adapterkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"switchboard/providers/httpgw/adaptertest"
)

// TestInitWritesAnAdapterWhoseCasePasses: for every channel, the folder Init writes holds the
// five files and its golden case passes as written, with a send accepted (and, for channels
// with receipts, a verified callback that moves the report).
func TestInitWritesAnAdapterWhoseCasePasses(t *testing.T) {
	t.Parallel()
	for _, channel := range Channels {
		t.Run(channel, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "my-"+channel+"-gateway")
			if err := Init(dir, channel); err != nil {
				t.Fatal(err)
			}
			for _, name := range Written {
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			rep, err := adaptertest.Check(dir, false)
			if err != nil || rep.Passed != 1 || rep.Failed != 0 {
				t.Fatalf("Check: %+v, %v", rep, err)
			}
			c, _ := os.ReadFile(filepath.Join(dir, "testdata", "accepted.txtar"))
			if !strings.Contains(string(c), "-- send1/outcome.yaml --\nclass: accepted\n") {
				t.Errorf("the case's first send is not accepted:\n%s", c)
			}
			snippet, _ := os.ReadFile(filepath.Join(dir, "runtime-snippet.yaml"))
			if !strings.Contains(string(snippet), "my-"+channel+"-gateway:") {
				t.Errorf("the snippet does not name the provider:\n%s", snippet)
			}
			if channel != "chat" && channel != "push" && !strings.Contains(string(c), "report: delivered\n") {
				t.Errorf("the case's callback did not report delivered:\n%s", c)
			}
			if channel == "push" && !strings.Contains(string(c), "code: push.unregistered\ndeviceUnregistered: true\n") {
				t.Errorf("the case's second send does not mark the device unregistered:\n%s", c)
			}
		})
	}
}

func TestInitRefusals(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := Init(filepath.Join(root, "gw"), "fax"); err == nil || !strings.Contains(err.Error(), "sms, email, chat") {
		t.Errorf("unknown channel: %v", err)
	}
	if err := Init(filepath.Join(root, "My_Gateway"), "sms"); err == nil || !strings.Contains(err.Error(), "provider id") {
		t.Errorf("a folder name that is not an identifier: %v", err)
	}
	full := filepath.Join(root, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "adapter.js"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Init(full, "sms"); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a folder that holds files: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(full, "adapter.js")); string(b) != "x" {
		t.Error("Init overwrote a file")
	}
}
