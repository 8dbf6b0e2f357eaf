package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"
)

// deploy/ holds a Grafana dashboard and Prometheus alert rules with their unit tests
// (docs/operations.md, "Dashboards and alerts"). These tests check that both name only series
// the program serves, that the dashboard imports into Grafana with its data source as an
// input, and, with promtool, that every expression parses and every rule behaves as its tests
// say.

const (
	dashboardFile  = "../../deploy/grafana-dashboard.json"
	alertsFile     = "../../deploy/alerts.yaml"
	alertTestsFile = "../../deploy/alerts_test.yaml"
	dashboardInput = "${DS_PROMETHEUS}"
)

// dashboard is what the tests read of the dashboard's JSON model.
type dashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	SchemaVersion int              `json:"schemaVersion"`
	UID           string           `json:"uid"`
	Title         string           `json:"title"`
	Panels        []dashboardPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string          `json:"name"`
			Datasource *dashboardDS    `json:"datasource"`
			Query      json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type dashboardDS struct{ Type, UID string }

type dashboardPanel struct {
	ID         int                      `json:"id"`
	Type       string                   `json:"type"`
	Title      string                   `json:"title"`
	Datasource *dashboardDS             `json:"datasource"`
	GridPos    struct{ H, W, X, Y int } `json:"gridPos"`
	Targets    []struct {
		RefID      string       `json:"refId"`
		Expr       string       `json:"expr"`
		Datasource *dashboardDS `json:"datasource"`
	} `json:"targets"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// dashboardExprs returns each query of the dashboard, named by where it stands.
func dashboardExprs(t *testing.T, d dashboard) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out[fmt.Sprintf("panel %q %s", p.Title, tg.RefID)] = tg.Expr
		}
	}
	for _, v := range d.Templating.List {
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: query: %v", v.Name, err)
		}
		// label_values(SELECTOR, label) names the series of its selector.
		sel := strings.TrimSuffix(strings.TrimPrefix(q.Query, "label_values("), ")")
		if i := strings.LastIndex(sel, ","); i > 0 {
			sel = sel[:i]
		}
		out["variable "+v.Name] = sel
	}
	return out
}

// alertRules returns each rule's expression by alert name.
func alertRules(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Rules []struct{ Alert, Expr, For string }
		}
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	out := map[string]string{}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			out["alert "+r.Alert] = r.Expr
		}
	}
	return out
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promName     = regexp.MustCompile(`\b(?:(?:switchboard|go|process)_[a-zA-Z0-9_:]+|up)\b`)
)

// seriesNames returns the metric names an expression reads: strings and label matchers are
// left out first, so that a label value or name is never taken for a metric.
func seriesNames(expr string) []string {
	expr = promMatchers.ReplaceAllString(promString.ReplaceAllString(expr, `""`), "{}")
	return promName.FindAllString(expr, -1)
}

// servedNames is every series name the metrics listener serves: the program's own (from the
// collectors' descriptions, as the metrics doc test reads them), the Go runtime's and the
// process's (gathered), histograms and summaries with their _bucket, _sum and _count, and
// Prometheus's own `up`.
func servedNames(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{"up": true}
	for name := range registeredSeries(t) {
		out[name] = true
	}
	m := newMetrics()
	for _, c := range m.own() {
		if _, ok := c.(*prometheus.HistogramVec); !ok {
			continue
		}
		ch := make(chan *prometheus.Desc, 1)
		c.Describe(ch)
		g := descPattern.FindStringSubmatch((<-ch).String())
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			out[g[1]+s] = true
		}
	}
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		out[f.GetName()] = true
		if k := f.GetType().String(); k == "HISTOGRAM" || k == "SUMMARY" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				out[f.GetName()+s] = true
			}
		}
	}
	return out
}

func TestDashboardAndAlertsNameServedSeries(t *testing.T) {
	t.Parallel()
	served := servedNames(t)
	exprs := dashboardExprs(t, readDashboard(t))
	for where, e := range alertRules(t) {
		exprs[where] = e
	}
	used := map[string]bool{}
	for where, e := range exprs {
		names := seriesNames(e)
		if len(names) == 0 {
			t.Errorf("%s names no series: %s", where, e)
		}
		for _, n := range names {
			used[n] = true
			if !served[n] {
				t.Errorf("%s reads %s, which the metrics listener does not serve", where, n)
			}
		}
	}
	// What the operator's kit is for: each of these is on the dashboard or in a rule.
	for _, n := range []string{"switchboard_queue_entries", "switchboard_queue_oldest_due_age_seconds",
		"switchboard_messages_accepted_total", "switchboard_provider_attempts_total",
		"switchboard_provider_send_duration_seconds_bucket", "switchboard_webhook_events_pending",
		"switchboard_webhook_delivery_lag_seconds_bucket", "switchboard_webhook_deliveries_total",
		"switchboard_retention_last_sweep_timestamp_seconds", "switchboard_dispatch_give_way_seconds_total",
		"switchboard_audit_chains_broken", "process_resident_memory_bytes", "up"} {
		if !used[n] {
			t.Errorf("neither the dashboard nor the rules read %s", n)
		}
	}
}

// The dashboard imports into Grafana on any Prometheus: its data source is the input
// DS_PROMETHEUS that the import asks for, every panel and variable uses it, and the panels fit
// the 24-column grid with ids of their own.
func TestDashboardImportsWithItsDataSourceAsInput(t *testing.T) {
	t.Parallel()
	d := readDashboard(t)
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" || d.Inputs[0].PluginID != "prometheus" {
		t.Fatalf("__inputs = %+v, want the one datasource input DS_PROMETHEUS of plugin prometheus", d.Inputs)
	}
	if d.SchemaVersion < 39 || d.UID == "" || d.Title == "" {
		t.Errorf("schemaVersion %d, uid %q, title %q: want a current schema (39 or later), a uid and a title", d.SchemaVersion, d.UID, d.Title)
	}
	isInput := func(ds *dashboardDS) bool { return ds != nil && ds.Type == "prometheus" && ds.UID == dashboardInput }
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] || p.ID == 0 {
			t.Errorf("panel %q: id %d is missing or taken", p.Title, p.ID)
		}
		ids[p.ID] = true
		if g := p.GridPos; g.W < 1 || g.X < 0 || g.X+g.W > 24 || g.H < 1 {
			t.Errorf("panel %q: gridPos %+v is off the 24-column grid", p.Title, g)
		}
		if p.Type == "row" {
			continue
		}
		if !isInput(p.Datasource) || len(p.Targets) == 0 {
			t.Errorf("panel %q: datasource %+v, %d queries; want %s and at least one", p.Title, p.Datasource, len(p.Targets), dashboardInput)
		}
		for _, tg := range p.Targets {
			if !isInput(tg.Datasource) || tg.Expr == "" || tg.RefID == "" {
				t.Errorf("panel %q query %q: datasource %+v, expr %q", p.Title, tg.RefID, tg.Datasource, tg.Expr)
			}
		}
	}
	for _, v := range d.Templating.List {
		if !isInput(v.Datasource) {
			t.Errorf("variable %s: datasource %+v, want %s", v.Name, v.Datasource, dashboardInput)
		}
	}
}

// promtool (Debian's prometheus package) checks the rules, runs their unit tests, and parses
// every query of the dashboard, each made a recording rule with Grafana's variables filled in.
func TestAlertRulesAndDashboardQueriesWithPromtool(t *testing.T) {
	t.Parallel()
	promtool := lookTool(t, "promtool", "prometheus", "SWITCHBOARD_REQUIRE_PROMTOOL")
	run := func(args ...string) {
		t.Helper()
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("check", "rules", alertsFile)
	run("test", "rules", alertTestsFile)

	exprs := dashboardExprs(t, readDashboard(t))
	fill := strings.NewReplacer("$__rate_interval", "5m", "$job", "switchboard", "$instance", ".*")
	keys := make([]string, 0, len(exprs))
	for k := range exprs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for i, k := range keys {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:query_%d", i), Expr: fill.Replace(exprs[k])})
	}
	doc, err := yaml.Marshal(map[string]any{"groups": []map[string]any{{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	run("check", "rules", path)
}
