package knowledge

import (
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

// validateNames checks drug_names.json and indications.json: every row
// cites known sources; a drug name names known drugs (a regimen may name
// none), a known kind, known markets and flags, a combination lists at
// least two ingredients and a regimen at least one; an
// indication code names a population that some recommendation row has, a
// known code system and match, and no (system, code, population) twice.
func (v *validator) validateNames(kb *engine.Knowledge) {
	seen := map[string]bool{}
	for i, n := range kb.DrugNames {
		row := i + 1
		v.cite(kbfile.DrugNames, row, "source_ids", n.SourceIDs)
		if strings.TrimSpace(n.Name) == "" {
			v.add(kbfile.DrugNames, row, "name", "empty name")
		}
		if !oneOf(n.Kind, engine.NameKindBrand, engine.NameKindGenericSynonym, engine.NameKindSalt, engine.NameKindAbbreviation, engine.NameKindCombination, engine.NameKindRegimen) {
			v.add(kbfile.DrugNames, row, "kind", "unknown kind %q", n.Kind)
		}
		if len(n.Drugs) == 0 && n.Kind != engine.NameKindRegimen {
			v.add(kbfile.DrugNames, row, "drugs", "names no drug")
		}
		for j, d := range n.Drugs {
			if !v.drugs[d] {
				v.add(kbfile.DrugNames, row, fmt.Sprintf("drugs[%d]", j), "unknown drug %q", d)
			}
		}
		for j, m := range n.Markets {
			if !oneOf(m, "US", "IN", "intl", "unknown") {
				v.add(kbfile.DrugNames, row, fmt.Sprintf("markets[%d]", j), "unknown market %q", m)
			}
		}
		for j, f := range n.Flags {
			if !oneOf(f, engine.NameFlagEnglishWord, engine.NameFlagStemEnglishWord, engine.NameFlagShort, engine.NameFlagResearchCode) {
				v.add(kbfile.DrugNames, row, fmt.Sprintf("flags[%d]", j), "unknown flag %q", f)
			}
		}
		if n.Kind == engine.NameKindCombination && len(n.Ingredients) < 2 {
			v.add(kbfile.DrugNames, row, "ingredients", "a combination lists %d ingredient(s)", len(n.Ingredients))
		}
		if n.Kind == engine.NameKindRegimen && len(n.Ingredients) == 0 {
			v.add(kbfile.DrugNames, row, "ingredients", "a regimen lists no ingredient")
		}
		k := strings.ToLower(n.Name) + "|" + n.Kind
		if seen[k] {
			v.add(kbfile.DrugNames, row, "name", "duplicate name %q of kind %s", n.Name, n.Kind)
		}
		seen[k] = true
	}
	pops := map[string]bool{}
	for _, r := range kb.Recommendations {
		pops[r.Population] = true
	}
	seen = map[string]bool{}
	for i, c := range kb.Indications {
		row := i + 1
		v.cite(kbfile.Indications, row, "source_ids", c.SourceIDs)
		if !pops[c.Population] || c.Population == "" {
			v.add(kbfile.Indications, row, "population", "no recommendation row has population %q", c.Population)
		}
		if !oneOf(c.System, engine.SystemICD10CM, engine.SystemICD10, engine.SystemICD10PCS, engine.SystemSNOMED) {
			v.add(kbfile.Indications, row, "system", "unknown code system %q", c.System)
		}
		if !oneOf(c.Match, "exact", "prefix") {
			v.add(kbfile.Indications, row, "match", "unknown match %q", c.Match)
		}
		if !oneOf(c.Basis, "named", "related", "not-named") {
			v.add(kbfile.Indications, row, "cpic_basis", "unknown basis %q", c.Basis)
		}
		if strings.TrimSpace(c.Code) == "" {
			v.add(kbfile.Indications, row, "code", "empty code")
		}
		k := c.System + "|" + c.Code + "|" + c.Population
		if seen[k] {
			v.add(kbfile.Indications, row, "code", "duplicate code %s %s for %s", c.System, c.Code, c.Population)
		}
		seen[k] = true
	}
}
