package calling

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file holds the notes a gene call carries and the orderings the matcher
// uses: allele function, natural name order, reference-like diplotypes.

// phenotypeInto fills the CPIC phenotype of a called diplotype.
func (k *Caller) phenotypeInto(gene string, cd *CalledDiplotype) {
	call, err := k.Phenotype(gene, cd.Alleles...)
	if err != nil {
		cd.PhenotypeError = err.Error()
		return
	}
	cd.Call = call
}

// naturalLess orders names with embedded numbers numerically ("c.557A>G"
// before "c.1129-5923C>G"; "*2" before "*10").
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, _ := strconv.Atoi(a[:da])
			nb, _ := strconv.Atoi(b[:db])
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// lowerFunction orders two alleles of a variant-list gene: lower activity
// value first (DPYD); Malignant Hyperthermia associated, then uncertain,
// then normal (RYR1, CACNA1S); then by name.
func (k *Caller) lowerFunction(gene, x, y string) bool {
	ax, _ := k.Allele(gene, x)
	ay, _ := k.Allele(gene, y)
	rx, ry := functionRank(ax), functionRank(ay)
	if rx != ry {
		return rx < ry
	}
	return naturalLess(x, y)
}

// functionRank is lower for lower function; unknown alleles rank lowest
// (most cautious).
func functionRank(a *engine.Allele) float64 {
	if a == nil {
		return -1
	}
	if a.Activity != "" {
		if f, err := strconv.ParseFloat(strings.TrimPrefix(a.Activity, "≥"), 64); err == nil {
			return f
		}
		return -1
	}
	switch a.Function {
	case "Malignant Hyperthermia associated":
		return 0
	case "Uncertain function", "Unknown function":
		return 1
	case "Normal function":
		return 2
	}
	return -1
}

// readsAsReference reports whether a called diplotype says what an
// all-reference sample would: only reference alleles, or the phenotype of
// the reference diplotype (normal function, "no known susceptibility").
func (k *Caller) readsAsReference(di *defIndex, dp CalledDiplotype) bool {
	ref := di.alleles[0].name
	only := true
	for _, a := range dp.Alleles {
		if a != ref {
			only = false
		}
	}
	if only {
		return true
	}
	refDip := make([]string, len(dp.Alleles))
	for i := range refDip {
		refDip[i] = ref
	}
	rc, err := k.Phenotype(di.def.Gene, refDip...)
	return err == nil && rc.Phenotype != "" && rc.Phenotype == dp.Call.Phenotype
}

// geneNotes adds the gene-specific caveats PharmCAT reports.
func (k *Caller) geneNotes(di *defIndex, sites []site, gc *GeneCall) {
	d := di.def
	missing := func(rs string) bool {
		for i, p := range d.Positions {
			if p.RsID == rs {
				return sites[i].missing
			}
		}
		return false
	}
	has := func(allele string) bool {
		for _, dp := range gc.Diplotypes {
			if slices.Contains(dp.Alleles, allele) {
				return true
			}
		}
		return false
	}
	switch d.Gene {
	case "CYP2C19":
		if missing("rs12248560") {
			gc.Notes = append(gc.Notes, "CYP2C19 rs12248560 is missing: *17 cannot be ruled out")
		}
		if missing("rs28399504") && has("*17") {
			gc.Notes = append(gc.Notes, "CYP2C19 rs28399504 is missing: *4 cannot be ruled out")
		}
		if missing("rs3758581") {
			gc.Notes = append(gc.Notes, "CYP2C19 rs3758581 is missing: *1 and *38 cannot be told apart")
		}
	case "CYP3A5":
		if missing("rs776746") {
			gc.Notes = append(gc.Notes, "CYP3A5 rs776746 (*3) is missing")
		}
	case "UGT1A1":
		if missing("rs3064744") {
			gc.Notes = append(gc.Notes, "UGT1A1 rs3064744 (the promoter TA repeat: *28, *36, *37) is missing")
		}
		if has("*80+*28") || has("*28") || has("*37") || has("*80+*37") || has("*36") {
			gc.Notes = append(gc.Notes, "UGT1A1 TA-repeat genotyping can be unreliable; confirm when it changes the advice")
		}
	case "CYP2D6":
		cyp2d6Provisional(gc)
	}
}

// cyp2d6Provisional makes a CYP2D6 call from position evidence provisional.
// Copy number (the *5 deletion, duplications, CYP2D7 hybrids) is not
// visible in position data, so a *1/*5 patient would read *1/*1: the
// SNV/indel alleles are reported without a phenotype, and the answer asks
// for copy-number evidence (an outside call), as PharmCAT does by default
// (RULES.md §3.8). A reading the evidence could not make keeps its status
// and review. One reading copy number cannot change stays called: every
// diplotype a Poor Metabolizer with activity score 0 (no-function alleles
// only; a deletion or duplication of them adds no activity).
func cyp2d6Provisional(gc *GeneCall) {
	gc.Notes = append(gc.Notes, "CYP2D6 copy number was not assessed: a *5 deletion or a duplication would change the activity score")
	if gc.Status == CallCalled && len(gc.Diplotypes) > 0 && allNoFunction(gc.Diplotypes) {
		gc.Notes = append(gc.Notes, "every CYP2D6 allele read has no function: a deletion or duplication cannot raise the activity score above 0, so the Poor Metabolizer reading stands without copy number")
		return
	}
	strip := func(ds []CalledDiplotype) {
		for i := range ds {
			ds[i].Call, ds[i].PhenotypeError = PhenotypeCall{}, ""
		}
	}
	strip(gc.Diplotypes)
	strip(gc.Alternatives)
	reading := ""
	if gc.Status == CallCalled && len(gc.Uninterpreted) == 0 && len(gc.Diplotypes) > 0 {
		gc.Status = CallProvisional
		names := make([]string, len(gc.Diplotypes))
		for i, dp := range gc.Diplotypes {
			names[i] = dp.String()
		}
		reading = "the SNV and indel alleles read " + strings.Join(names, " or ") + " (provisional), but "
	}
	gc.Uninterpreted = append(gc.Uninterpreted, "CYP2D6 from position data: "+reading+"copy number (the *5 deletion, duplications, hybrids) is not visible in position data, so no phenotype is given; a CYP2D6 copy-number call (an outside call) is needed")
}

// allNoFunction reports whether every diplotype is a Poor Metabolizer with
// activity score 0.
func allNoFunction(ds []CalledDiplotype) bool {
	for _, d := range ds {
		f, err := strconv.ParseFloat(d.Call.ActivityScore, 64)
		if d.Call.Phenotype != "Poor Metabolizer" || d.PhenotypeError != "" || err != nil || f != 0 {
			return false
		}
	}
	return true
}
