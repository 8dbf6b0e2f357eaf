package engine

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The state diagram and transition table of docs/architecture.md are generated from
// Transitions. This test regenerates them and fails when the committed page differs; with
// SWITCHBOARD_WRITE_DOCS=1 it writes the page instead.

const (
	architectureDoc = "../docs/architecture.md"
	generatedBegin  = "<!-- generated from engine.Transitions() by engine/lifecycle_doc_test.go: do not edit by hand -->"
	generatedEnd    = "<!-- end of the generated transitions -->"
)

// lifecycleDoc renders the dispatch transitions: a mermaid state diagram, then a table with
// who makes each move, what in the engine decides it and which Store method applies it.
func lifecycleDoc() string {
	var b strings.Builder
	b.WriteString("```mermaid\nstateDiagram-v2\n")
	fmt.Fprintf(&b, "    [*] --> %s: accepted (Store.Accept)\n", DispatchQueued)
	for _, t := range Transitions() {
		// A colon ends a mermaid label's start: keep the words, drop the colons.
		fmt.Fprintf(&b, "    %s --> %s: %s\n", t.From, t.To, strings.ReplaceAll(t.By, ":", ""))
	}
	b.WriteString("```\n\n")
	b.WriteString("| from | to | by | decided by (engine) | applied by (Store) |\n|---|---|---|---|---|\n")
	for _, t := range Transitions() {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | `%s` |\n", t.From, t.To, t.By, t.Decider, t.Write)
	}
	return b.String()
}

func TestArchitectureDocLifecycle(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(architectureDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	begin, end := strings.Index(doc, generatedBegin), strings.Index(doc, generatedEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no generated transitions between %q and %q", architectureDoc, generatedBegin, generatedEnd)
	}
	begin += len(generatedBegin)
	want := "\n" + lifecycleDoc()
	if doc[begin:end] == want {
		return
	}
	if os.Getenv("SWITCHBOARD_WRITE_DOCS") == "1" {
		if err := os.WriteFile(architectureDoc, []byte(doc[:begin]+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s does not show engine.Transitions() as it is; regenerate it with\n"+
		"SWITCHBOARD_WRITE_DOCS=1 go test ./engine -run TestArchitectureDocLifecycle\nwant:\n%s", architectureDoc, want)
}
