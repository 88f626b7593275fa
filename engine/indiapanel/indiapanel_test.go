package indiapanel_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/indiapanel"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

// TestBuildPlacesGuidedDrugs: every guided drug is placed in an area or
// listed without one, an area's drugs are guided and have a code in one
// of its groups, and every source id list is sorted without repeats.
func TestBuildPlacesGuidedDrugs(t *testing.T) {
	b, err := knowledge.DefaultBase()
	if err != nil {
		t.Fatalf("load knowledge: %v", err)
	}
	kb := b.Engine
	p := indiapanel.Build(kb)
	sorted := func(what string, ids []string) {
		t.Helper()
		if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Errorf("%s: source ids %v not sorted or repeated", what, ids)
		}
	}
	placed := map[string]bool{}
	for _, a := range p.Areas {
		for _, d := range a.Drugs {
			placed[d.Name] = true
			if d.Sensitivity != "high" && d.Sensitivity != "moderate" {
				t.Errorf("%s: %s has sensitivity %q", a.ID, d.Name, d.Sensitivity)
			}
			inGroup := slices.ContainsFunc(d.ATCCodes, func(c string) bool {
				return slices.ContainsFunc(a.ATCGroups, func(g indiapanel.ATCGroup) bool { return strings.HasPrefix(c, g.Code) })
			})
			if !inGroup {
				t.Errorf("%s: %s codes %v lie in none of its groups", a.ID, d.Name, d.ATCCodes)
			}
			sorted(a.ID+"/"+d.Name, d.SourceIDs)
		}
	}
	if p.DrugsPlaced != len(placed) {
		t.Errorf("DrugsPlaced = %d, areas place %d", p.DrugsPlaced, len(placed))
	}
	var guided, want []string
	for _, d := range kb.Drugs {
		if d.Sensitivity == "high" || d.Sensitivity == "moderate" {
			guided = append(guided, d.Name)
			if !placed[d.Name] {
				want = append(want, d.Name)
			}
		}
	}
	if diff := cmp.Diff(want, p.DrugsWithoutArea); diff != "" {
		t.Errorf("drugs without an area (-want +got):\n%s", diff)
	}
	if len(placed)+len(p.DrugsWithoutArea) != len(guided) {
		t.Errorf("%d placed + %d without an area != %d guided", len(placed), len(p.DrugsWithoutArea), len(guided))
	}
	for _, st := range p.Pathway {
		sorted("pathway "+st.ID, st.SourceIDs)
	}
	if got := len(p.Herbs); got != len(kb.Herbs) {
		t.Errorf("%d herbs, knowledge has %d", got, len(kb.Herbs))
	}
}
