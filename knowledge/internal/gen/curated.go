package main

// The generator's own curated name tables (curated/): what the shared data
// pack does not have and was read, row by row, from public pages reached
// with the project's search tool. Each row names the page it comes from
// (curated/sources.csv: one source per page, with its URL); nothing is
// typed from memory. curated/README.md says how the tables were made.
//
//   - regimens.csv: abbreviations of HIV, TB and cancer prescribing for
//     one drug or a regimen ("EFV", "ATV/r", "FOLFOX", "HRZE") with their
//     expansion as the page writes it. A row becomes a drug_names.json row
//     of kind "regimen": ingredients are the expansion, drugs the
//     ingredients that are knowledge drugs (by name or synonym, exactly).
//     An abbreviation whose page gives two expansions is not in the table;
//     one that also names another drug elsewhere in the knowledge (ATV: an
//     Indian atorvastatin brand) is kept, and the name reader refuses to
//     guess between the two.
//   - in_brands.csv: Indian brands of knowledge drugs, each with the
//     product's composition as its page writes it. The composition must
//     name the row's drug (single ingredient: the drug by name or synonym,
//     salt words aside; several: each ingredient is part of the knowledge
//     drug's name, as for sulfamethoxazole / trimethoprim).

import (
	"embed"
	"fmt"
	"net/url"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

//go:embed curated/*.csv
var curatedFS embed.FS

// licWebPage is the licence note of a page a curated row cites.
const licWebPage = "public web page; only the fact is kept (an abbreviation's expansion, a product's name and composition), not the page's text"

// curatedSources reads curated/sources.csv.
func curatedSources() (map[string]knowledge.Source, error) {
	t, err := readCSVFS(curatedFS, "curated/sources.csv", []string{"source_id", "title", "publisher", "url"})
	if err != nil {
		return nil, err
	}
	out := map[string]knowledge.Source{}
	for _, r := range t.rows {
		id, u := r.s("source_id"), r.s("url")
		if id == "" || r.s("title") == "" {
			return nil, fmt.Errorf("%s: empty source_id or title", r.where())
		}
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
			return nil, fmt.Errorf("%s: source %s has no page URL (%q)", r.where(), id, u)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("%s: duplicate source_id %q", r.where(), id)
		}
		out[id] = knowledge.Source{ID: id, Title: r.s("title"), Publisher: r.s("publisher"), URL: u, Licence: licWebPage}
	}
	return out, nil
}

// curatedNames adds the rows of curated/regimens.csv and
// curated/in_brands.csv to nb.
func (b *builder) curatedNames(nb *nameBuilder) error {
	srcs, err := curatedSources()
	if err != nil {
		return err
	}
	used := map[string]bool{}
	cite := func(r row) (string, error) {
		s, ok := srcs[r.s("source_id")]
		if !ok {
			return "", fmt.Errorf("%s: unknown source_id %q", r.where(), r.s("source_id"))
		}
		used[s.ID] = true
		return b.src.add(s), nil
	}
	flagsOf := func(r row, name string) ([]string, error) {
		flags := splitList(r.s("flags"), ";")
		for _, f := range flags {
			if !nameFlags[f] || f == engine.NameFlagShort {
				return nil, fmt.Errorf("%s: flag %q (short is computed)", r.where(), f)
			}
		}
		if len([]rune(name)) <= 3 {
			flags = append(flags, engine.NameFlagShort)
		}
		return flags, nil
	}

	reg, err := readCSVFS(curatedFS, "curated/regimens.csv", []string{"name", "ingredients", "context", "source_id", "flags", "as_written"})
	if err != nil {
		return err
	}
	for _, r := range reg.rows {
		name, ingredients := r.s("name"), splitList(r.s("ingredients"), ";")
		if name == "" || len(ingredients) == 0 || r.s("as_written") == "" {
			return fmt.Errorf("%s: a regimen needs a name, its ingredients and the page's words", r.where())
		}
		switch r.s("context") {
		case "HIV", "TB", "oncology":
		default:
			return fmt.Errorf("%s: unknown context %q", r.where(), r.s("context"))
		}
		sid, err := cite(r)
		if err != nil {
			return err
		}
		flags, err := flagsOf(r, name)
		if err != nil {
			return err
		}
		drugs := []string{}
		for _, in := range ingredients {
			if in != strings.ToLower(in) {
				return fmt.Errorf("%s: ingredient %q: write ingredients in lower case, as generic names", r.where(), in)
			}
			if d, ok := b.coveredNames[in]; ok {
				drugs = appendUniq(drugs, d)
			}
		}
		nb.add(name, engine.NameKindRegimen, drugs, "intl", sid, ingredients, "", flags)
	}

	br, err := readCSVFS(curatedFS, "curated/in_brands.csv", []string{"name", "brand_stem", "drug", "ingredients", "manufacturer", "source_id", "flags", "as_written"})
	if err != nil {
		return err
	}
	for _, r := range br.rows {
		name, drug := r.s("name"), r.s("drug")
		if _, ok := b.drugSet[drug]; !ok {
			return fmt.Errorf("%s: drug %q is not a knowledge drug", r.where(), drug)
		}
		ingredients := splitList(r.s("ingredients"), ";")
		if name == "" || len(ingredients) == 0 || r.s("as_written") == "" {
			return fmt.Errorf("%s: a brand needs a name, its composition and the page's words", r.where())
		}
		if err := b.compositionNames(drug, ingredients); err != nil {
			return fmt.Errorf("%s: %w", r.where(), err)
		}
		sid, err := cite(r)
		if err != nil {
			return err
		}
		flags, err := flagsOf(r, name)
		if err != nil {
			return err
		}
		if st := r.s("brand_stem"); len([]rune(st)) <= 3 && st != "" {
			return fmt.Errorf("%s: stem %q is short; leave it out", r.where(), st)
		}
		nb.add(name, engine.NameKindBrand, []string{drug}, "IN", sid, nil, r.s("brand_stem"), flags)
	}
	for id := range srcs {
		if !used[id] {
			return fmt.Errorf("curated/sources.csv: source %s is cited by no row", id)
		}
	}
	return nil
}

// compositionNames checks that a brand's composition names its drug: one
// ingredient is the drug by name or synonym (salt words aside, INN
// spelling applied: innSpelling); several
// are each part of the drug's name (a knowledge drug that is itself a
// combination).
func (b *builder) compositionNames(drug string, ingredients []string) error {
	if len(ingredients) == 1 {
		in := innSpelling(strings.ToLower(ingredients[0]))
		for _, w := range []string{"", " sulfate", " sulphate", " hydrochloride", " citrate", " sodium", " phosphate"} {
			if d, ok := b.coveredNames[strings.TrimSuffix(in, w)]; ok && strings.HasSuffix(in, w) && d == drug {
				return nil
			}
		}
		return fmt.Errorf("composition %q does not name %s", ingredients[0], drug)
	}
	for _, in := range ingredients {
		if !strings.Contains(drug, strings.ToLower(in)) {
			return fmt.Errorf("composition item %q is not part of %s", in, drug)
		}
	}
	return nil
}

// innSpellings are ways pages write an international nonproprietary name
// otherwise: "Pegylated Interferon Alpha-2b" is peginterferon alfa-2b (the
// INN spells alpha "alfa" and writes a pegylated interferon as one word).
var innSpellings = strings.NewReplacer("pegylated interferon ", "peginterferon ", "alpha", "alfa")

// innSpelling returns a lower-case composition item with the INN's spelling.
func innSpelling(in string) string {
	return innSpellings.Replace(in)
}
