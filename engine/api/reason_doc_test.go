package api

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"switchboard/engine"
)

// TestReasonCodesDocumented holds the page's table of Switchboard's own reason codes, and the
// OpenAPI document's Reason schema, to the engine: every code it gives itself is a row (and no
// other), each row's "by" names only values the view may carry, and the schema's by enum is
// exactly those values.
func TestReasonCodesDocumented(t *testing.T) {
	t.Parallel()
	var documented []string
	by := map[string]bool{}
	for _, v := range engine.ReasonByValues() {
		by[string(v)] = true
	}
	for _, row := range tableRows(docSection(t, apiDoc, "Why a message failed")) {
		c := code(row[0])
		if c == "" {
			continue // the header
		}
		documented = append(documented, c)
		for _, cell := range strings.Split(row[1], ",") {
			if v := code(strings.TrimSpace(cell)); !by[v] {
				t.Errorf("docs/api.md: %s is given by %q, not one of %v", c, cell, engine.ReasonByValues())
			}
		}
	}
	own := engine.OwnReasonCodes()
	sort.Strings(documented)
	want := slices.Clone(own)
	sort.Strings(want)
	if !slices.Equal(documented, want) {
		t.Errorf("docs/api.md, \"Why a message failed\" lists %v, the engine gives %v", documented, want)
	}

	var doc struct {
		Components struct {
			Schemas struct {
				Reason struct {
					Description string
					Properties  struct {
						By struct {
							Enum []string
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Components.Schemas.Reason
	var values []string
	for _, v := range engine.ReasonByValues() {
		values = append(values, string(v))
	}
	if !slices.Equal(r.Properties.By.Enum, values) {
		t.Errorf("/openapi.json: Reason.by is %v, want %v", r.Properties.By.Enum, values)
	}
	for _, c := range own {
		if !strings.Contains(r.Description, c) {
			t.Errorf("/openapi.json: Reason's description does not name %s", c)
		}
	}
}
