package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/knowledge"
)

// This file builds definitions.json, the allele matcher's input, from
// PharmCAT's allele definition files (pgx/pharmcat/definition/
// <GENE>_translation.json) and exemptions.json, and overlays the current
// RYR1 allele functions (pgx/pharmcat/current-functions/
// RYR1_functions_current.json) onto genes.json.

// pcatVariant is one entry of a translation file's variants[].
type pcatVariant struct {
	Chromosome string            `json:"chromosome"`
	Position   int               `json:"position"`
	RsID       *string           `json:"rsid"`
	HGVS       string            `json:"chromosomeHgvsName"`
	CPICToVCF  map[string]string `json:"cpicToVcfAlleleMap"`
	Ref        string            `json:"ref"`
	Alts       []string          `json:"alts"`
}

// pcatDefinition is a <GENE>_translation.json file (the fields used).
type pcatDefinition struct {
	Version      string        `json:"version"`
	Gene         string        `json:"gene"`
	Chromosome   string        `json:"chromosome"`
	GenomeBuild  string        `json:"genomeBuild"`
	RefSeq       string        `json:"refSeqChromosomeId"`
	Variants     []pcatVariant `json:"variants"`
	NamedAlleles []struct {
		Name       string    `json:"name"`
		Alleles    []*string `json:"alleles"`
		Reference  bool      `json:"reference"`
		Structural bool      `json:"structuralVariant"`
	} `json:"namedAlleles"`
}

// pcatExemption is one gene of exemptions.json (the fields used).
type pcatExemption struct {
	Gene               string        `json:"gene"`
	RequiredPositions  []int         `json:"requiredPositions"`
	IgnoredPositions   []pcatVariant `json:"ignoredPositions"`
	ExtraPositions     []pcatVariant `json:"extraPositions"`
	IgnoredAlleles     []string      `json:"ignoredAlleles"`
	UnphasedPriorities []struct {
		List []string `json:"list"`
		Pick string   `json:"pick"`
	} `json:"unphasedDiplotypePriorities"`
	AMP1Alleles   []string `json:"amp1Alleles"`
	AMP1Positions []int    `json:"amp1Positions"`
}

// toxicityGenes read undocumented bases as reference; variantListGenes are
// reported as lists of variants with the two-lowest rule. Both lists are
// PharmCAT's documented behaviour (NamedAlleleMatcher-101 "undocumented
// variations"; Gene-Definition-Exceptions for DPYD and RYR1; CACNA1S is
// reported the same way), summarised in pgx/pharmcat/RULES.md §2.5, §3.1-3.2.
var (
	toxicityGenes    = map[string]bool{"CACNA1S": true, "DPYD": true, "G6PD": true, "NUDT15": true, "RYR1": true, "TPMT": true}
	variantListGenes = map[string]bool{"CACNA1S": true, "DPYD": true, "RYR1": true}
)

// pharmcatDir is the PharmCAT folder of the data pack.
func (b *builder) pharmcatDir() string { return filepath.Join(b.dir, "pgx", "pharmcat") }

// buildDefinitions builds definitions.json.
func (b *builder) buildDefinitions() error {
	dir := filepath.Join(b.pharmcatDir(), "definition")
	ex := map[string]pcatExemption{}
	if err := readJSON(filepath.Join(dir, "exemptions.json"), &ex); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_translation.json"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return fmt.Errorf("%s: no *_translation.json files", dir)
	}
	for _, f := range files {
		var pd pcatDefinition
		if err := readJSON(f, &pd); err != nil {
			return err
		}
		if !strings.HasPrefix(pd.GenomeBuild, "GRCh38") {
			return fmt.Errorf("%s: genome build %q", f, pd.GenomeBuild)
		}
		if b.pcatVersion == "" {
			b.pcatVersion = pd.Version
		} else if b.pcatVersion != pd.Version {
			return fmt.Errorf("%s: data version %s differs from %s", f, pd.Version, b.pcatVersion)
		}
		gd := knowledge.GeneDefinition{
			Gene: pd.Gene, Chromosome: pd.Chromosome, RefSeq: pd.RefSeq, DataVersion: pd.Version,
			UndocumentedAsReference: toxicityGenes[pd.Gene], VariantList: variantListGenes[pd.Gene],
			SourceIDs: []string{b.src.fixed("pcat-alleles")},
		}
		e, hasEx := ex[pd.Gene]
		ignoredPos := map[int]bool{}
		if hasEx {
			for _, p := range e.IgnoredPositions {
				ignoredPos[p.Position] = true
			}
			gd.RequiredPositions = e.RequiredPositions
			// An ignored allele the definition file does not hold (G6PD
			// "Mediterranean Haplotype" at this data version) cannot be
			// called anyway and is not listed.
			for _, n := range e.IgnoredAlleles {
				for _, na := range pd.NamedAlleles {
					if na.Name == n {
						gd.IgnoredAlleles = append(gd.IgnoredAlleles, n)
					}
				}
			}
			for _, p := range e.ExtraPositions {
				gd.ExtraPositions = append(gd.ExtraPositions, definedPosition(p))
			}
			for _, r := range e.UnphasedPriorities {
				gd.UnphasedPriorities = append(gd.UnphasedPriorities, knowledge.PriorityRule{List: r.List, Pick: r.Pick})
			}
			// The AMP tier-1 lists (the alleles a clinical assay must
			// test, and their positions). A tier-1 allele the definition
			// file does not hold (CYP2D6 *5, the whole-gene deletion) is
			// copy number, not position evidence, and is not listed.
			gd.Tier1Positions = e.AMP1Positions
			for _, n := range e.AMP1Alleles {
				for _, na := range pd.NamedAlleles {
					if na.Name == n {
						gd.Tier1Alleles = append(gd.Tier1Alleles, n)
					}
				}
			}
			if len(e.RequiredPositions)+len(e.IgnoredPositions)+len(e.ExtraPositions)+len(e.IgnoredAlleles)+len(e.UnphasedPriorities)+len(e.AMP1Alleles)+len(e.AMP1Positions) > 0 {
				gd.SourceIDs = append(gd.SourceIDs, b.src.fixed("pcat-exemptions"))
			}
		}
		if toxicityGenes[pd.Gene] || variantListGenes[pd.Gene] {
			gd.SourceIDs = append(gd.SourceIDs, b.src.fixed("pcat-nam-docs"))
		}
		gd.SourceIDs = sortUnique(gd.SourceIDs)
		for _, v := range pd.Variants {
			if v.Chromosome != pd.Chromosome {
				return fmt.Errorf("%s: variant at %s:%d is not on %s", f, v.Chromosome, v.Position, pd.Chromosome)
			}
			p := definedPosition(v)
			if ignoredPos[v.Position] && sameVariant(v, e.IgnoredPositions) {
				p.Ignored = true
				gd.IgnoredPositions = append(gd.IgnoredPositions, p)
				continue
			}
			gd.Positions = append(gd.Positions, p)
		}
		for i := 1; i < len(gd.Positions); i++ {
			if gd.Positions[i].Pos <= gd.Positions[i-1].Pos {
				return fmt.Errorf("%s: positions not ascending at %d", f, gd.Positions[i].Pos)
			}
		}
		for ai, na := range pd.NamedAlleles {
			if (ai == 0) != na.Reference {
				return fmt.Errorf("%s: allele %s: the reference allele must come first and only once", f, na.Name)
			}
			if len(na.Alleles) != len(pd.Variants) {
				return fmt.Errorf("%s: allele %s has %d cells for %d positions", f, na.Name, len(na.Alleles), len(pd.Variants))
			}
			da := knowledge.DefinedAllele{Name: na.Name, Structural: na.Structural, Cells: []knowledge.AlleleCell{}}
			for i, c := range na.Alleles {
				if c == nil || sameVariant(pd.Variants[i], e.IgnoredPositions) {
					continue
				}
				da.Cells = append(da.Cells, knowledge.AlleleCell{Pos: pd.Variants[i].Position, Allele: *c})
			}
			gd.Alleles = append(gd.Alleles, da)
		}
		b.kb.Definitions = append(b.kb.Definitions, gd)
	}
	return nil
}

// sameVariant reports whether v is one of the listed variants (same
// position and reference allele: G6PD has an ignored deletion and a
// defining SNV at the same position).
func sameVariant(v pcatVariant, list []pcatVariant) bool {
	for _, x := range list {
		if x.Position == v.Position && x.Ref == v.Ref {
			return true
		}
	}
	return false
}

func definedPosition(v pcatVariant) knowledge.DefinedPosition {
	p := knowledge.DefinedPosition{Pos: v.Position, Ref: v.Ref, Alts: v.Alts, HGVS: v.HGVS}
	if v.RsID != nil {
		p.RsID = *v.RsID
	}
	if p.Alts == nil {
		p.Alts = []string{}
	}
	// Keep only the map entries that are not identities (indels, repeats).
	for c, vcf := range v.CPICToVCF {
		if c != vcf {
			if p.CPICToVCF == nil {
				p.CPICToVCF = map[string]string{}
			}
			p.CPICToVCF[c] = vcf
		}
	}
	return p
}

// ryr1Current is current-functions/RYR1_functions_current.json.
type ryr1Current struct {
	Alleles []struct {
		Allele            string `json:"allele"`
		InHeadDefinitions bool   `json:"in_head_definitions"`
		Function          string `json:"function"`
	} `json:"alleles"`
}

// overlayRYR1 replaces the RYR1 allele functions of the 2023-12 phenotype
// file by the current ones (PharmCAT data 2025-11-05), for every allele of
// the HEAD definitions.
func (b *builder) overlayRYR1() error {
	var cur ryr1Current
	if err := readJSON(filepath.Join(b.pharmcatDir(), "current-functions", "RYR1_functions_current.json"), &cur); err != nil {
		return err
	}
	for gi := range b.kb.Genes {
		g := &b.kb.Genes[gi]
		if g.Symbol != "RYR1" {
			continue
		}
		have := map[string]int{}
		for i, a := range g.Alleles {
			have[a.Name] = i
		}
		src := b.src.fixed("pcat-ryr1-current")
		for _, c := range cur.Alleles {
			if !c.InHeadDefinitions {
				continue
			}
			if c.Function == "" {
				return fmt.Errorf("RYR1_functions_current.json: %s has no function", c.Allele)
			}
			if i, ok := have[c.Allele]; ok {
				g.Alleles[i].Function = c.Function
				g.Alleles[i].SourceIDs = sortUnique(append(g.Alleles[i].SourceIDs, src))
				continue
			}
			g.Alleles = append(g.Alleles, knowledge.Allele{Name: c.Allele, Function: c.Function, SourceIDs: []string{src}})
		}
		sort.SliceStable(g.Alleles, func(i, j int) bool { return naturalCompare(g.Alleles[i].Name, g.Alleles[j].Name) < 0 })
		g.SourceIDs = sortUnique(append(g.SourceIDs, src))
		return nil
	}
	return fmt.Errorf("overlayRYR1: no RYR1 gene")
}

// cyp2d6Additions is current-functions/CYP2D6_phenotype_additions.json.
type cyp2d6Additions struct {
	Additions map[string]string `json:"additions"`
}

// addCYP2D6Combinations adds the CYP2D6 tandem/hybrid alleles PharmCAT's
// current phenotype data has and the 2024-08 copy lacks ("*36 + *10"),
// with their CPIC activity values; an entry without a number (the
// function-only "*68x2") is added without an activity value.
func (b *builder) addCYP2D6Combinations() error {
	var add cyp2d6Additions
	if err := readJSON(filepath.Join(b.pharmcatDir(), "current-functions", "CYP2D6_phenotype_additions.json"), &add); err != nil {
		return err
	}
	for gi := range b.kb.Genes {
		g := &b.kb.Genes[gi]
		if g.Symbol != "CYP2D6" {
			continue
		}
		have := map[string]bool{}
		for _, a := range g.Alleles {
			have[a.Name] = true
		}
		src := b.src.fixed("pcat-cyp2d6-additions")
		for _, name := range sortedKeys(add.Additions) {
			if have[name] {
				return fmt.Errorf("CYP2D6_phenotype_additions.json: %s is already an allele", name)
			}
			a := knowledge.Allele{Name: name, SourceIDs: []string{src}}
			v := add.Additions[name]
			if _, err := strconv.ParseFloat(v, 64); err == nil {
				a.Activity = v
			} else {
				a.Function = v
				a.Activity = "n/a"
			}
			g.Alleles = append(g.Alleles, a)
		}
		sort.SliceStable(g.Alleles, func(i, j int) bool { return naturalCompare(g.Alleles[i].Name, g.Alleles[j].Name) < 0 })
		g.SourceIDs = sortUnique(append(g.SourceIDs, src))
		return nil
	}
	return fmt.Errorf("addCYP2D6Combinations: no CYP2D6 gene")
}
