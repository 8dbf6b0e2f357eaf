package main

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// docs/operations.md, "Metrics" lists every series the metrics listener serves with its labels.
// This test reads the series from the collectors themselves (their descriptions) and fails when
// the page and the program disagree on a name or a label.

const operationsDoc = "../../docs/operations.md"

// descPattern reads a metric's name and variable labels from prometheus.Desc's String form,
// the one place the client library shows them.
var descPattern = regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)

// registeredSeries returns each series of the program's own collectors and of the queue
// collector, with its labels sorted and joined by commas.
func registeredSeries(t *testing.T) map[string]string {
	t.Helper()
	m := newMetrics()
	cs := append(m.own(), newQueueCollector(nil))
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range cs {
			c.Describe(ch)
		}
		close(ch)
	}()
	out := map[string]string{}
	for d := range ch {
		g := descPattern.FindStringSubmatch(d.String())
		if g == nil {
			t.Fatalf("cannot read the name and labels of %s", d)
		}
		var labels []string
		for _, l := range strings.Split(g[2], ",") {
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
		sort.Strings(labels)
		out[g[1]] = strings.Join(labels, ",")
	}
	if len(out) < 10 {
		t.Fatalf("read only %d series from the collectors", len(out))
	}
	return out
}

// documentedSeries returns each switchboard_ series of the page's metrics table: the name in
// the first cell, the labels as code spans in the third (none when it has none).
func documentedSeries(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	in := false
	span := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "#") {
			in = strings.HasPrefix(strings.TrimLeft(line, "# "), "Metrics")
			continue
		}
		if !in || !strings.HasPrefix(line, "| `switchboard_") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 4 {
			t.Fatalf("a metrics row has fewer than 4 cells: %s", line)
		}
		name := span.FindStringSubmatch(cells[0])[1]
		var labels []string
		for _, m := range span.FindAllStringSubmatch(cells[2], -1) {
			labels = append(labels, m[1])
		}
		sort.Strings(labels)
		out[name] = strings.Join(labels, ",")
	}
	return out
}

func TestOperationsDocListsEveryMetric(t *testing.T) {
	t.Parallel()
	have, doc := registeredSeries(t), documentedSeries(t)
	for name, labels := range have {
		switch got, ok := doc[name]; {
		case !ok:
			t.Errorf("docs/operations.md, \"Metrics\" lacks %s {%s}", name, labels)
		case got != labels:
			t.Errorf("docs/operations.md gives %s the labels {%s}; the program gives {%s}", name, got, labels)
		}
	}
	for name := range doc {
		if _, ok := have[name]; !ok {
			t.Errorf("docs/operations.md, \"Metrics\" lists %s, which the program does not export", name)
		}
	}
}
