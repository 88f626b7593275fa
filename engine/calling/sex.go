package calling

import (
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file reads X-linked genes (G6PD) by the patient's sex (issue 21):
//
//   - a male has one X: two different alleles of an X-linked gene — a
//     diplotype of two different alleles, zygosity "het" on an X position,
//     a heterozygous call there — are refused (422 naming the field); the
//     same allele twice is read as hemizygous, as before;
//   - a female has two: one allele alone (a diplotype, zygosity "hemi", a
//     haploid call) is refused;
//   - sex not given: what the genotype itself shows decides (two alleles
//     are a female's, one a male's) and the answer says so; a variant
//     given without its zygosity could be either, so both readings are
//     kept and the most severe advice applies (sexReadings).

// sexOf returns "male", "female" or "".
func sexOf(req engine.Request) string {
	if req.Patient == nil {
		return ""
	}
	switch s := strings.ToLower(strings.TrimSpace(req.Patient.Sex)); s {
	case "male", "female":
		return s
	}
	return ""
}

// onChrX reports whether a variants item is placed on a definition
// position of an X-linked gene.
func (k *Caller) onChrX(v variantSpec) bool {
	var loci []defLocus
	if v.rsid != "" {
		loci = k.idx.defRsid[v.rsid]
	} else {
		loci = k.hgvsLoci(v)
	}
	for _, l := range loci {
		if l.di.def.Chromosome == "chrX" {
			return true
		}
	}
	return false
}

// validateSex adds, through bad, the field errors of genotype input that
// the patient's sex makes impossible. specs are the parsed variants items
// by index (nil where the item did not parse).
func (k *Caller) validateSex(req engine.Request, specs []*variantSpec, bad func(field, reason string, args ...any)) {
	sex := sexOf(req)
	if sex == "" {
		return
	}
	for gene, d := range req.Diplotypes {
		g, ok := k.Gene(gene)
		if !ok || g.Chromosome != "chrX" {
			continue
		}
		alleles, err := k.parseDiplotype(g, d)
		if err != nil {
			continue // reported by Validate
		}
		if sex == "male" && len(alleles) == 2 && alleles[0] != alleles[1] {
			bad("diplotypes."+gene, "%q is two different alleles, but the patient is male: %s is X-linked and a male has one X chromosome, so give one allele (%s or %s), or correct patient.sex", d, gene, alleles[0], alleles[1])
		}
	}
	zyg := map[string]string{}
	for key := range req.Zygosity {
		zyg[strings.ToLower(strings.TrimSpace(key))] = key
	}
	for _, v := range specs {
		if v == nil || !k.onChrX(*v) {
			continue
		}
		key, ok := zyg[strings.ToLower(v.item)]
		if !ok && v.rsid != "" {
			key, ok = zyg[v.rsid]
		}
		if !ok {
			continue
		}
		switch z := req.Zygosity[key]; {
		case sex == "male" && z == engine.Het:
			bad("zygosity."+key, "is het, but the patient is male and %s is on the X chromosome, of which a male has one: give hemi (or ref), or correct patient.sex", v.item)
		case sex == "female" && z == engine.Hemi:
			bad("zygosity."+key, "is hemi, but the patient is female and has two X chromosomes: give het or hom (or ref), or correct patient.sex")
		}
	}
	for i, c := range req.Calls {
		if NormChrom(c.Chrom) != "chrX" || len(k.idx.defPos["chrX"][c.Pos]) == 0 {
			continue
		}
		gt, _, err := parseGT(c.Genotype)
		if err != nil {
			continue // reported by Validate
		}
		switch {
		case sex == "male" && len(gt) == 2 && gt[0] != gt[1] && gt[0] >= 0 && gt[1] >= 0:
			bad(fmt.Sprintf("calls[%d].genotype", i), "%q is heterozygous, but the patient is male and chrX:%d is on the X chromosome, of which a male has one: give a haploid genotype (1 or 0), or correct patient.sex", c.Genotype, c.Pos)
		case sex == "female" && len(gt) == 1:
			bad(fmt.Sprintf("calls[%d].genotype", i), "%q is haploid, but the patient is female and has two X chromosomes at chrX:%d: give a diploid genotype (0/1, 1/1, 0/0), or correct patient.sex", c.Genotype, c.Pos)
		}
	}
}

// sexReadings, for a patient whose sex is not given, adds a male's reading
// of every X-linked gene that a variant given without its zygosity
// reaches: such a variant is one copy of a female's two X chromosomes or
// the one X of a male, and the two readings can differ (G6PD A-: Variable
// for a heterozygous female, Deficient for a hemizygous male). The call
// then holds both readings and the most severe advice applies
// (noteSexUnknown says so). A male reading that cannot be made cleanly is
// not added.
func (k *Caller) sexReadings(req engine.Request, ro *requestObs, calls map[string]*GeneCall, assume map[string]bool) {
	for gene, gc := range calls {
		di := k.idx.defs[gene]
		if gc == nil || di == nil || di.def.Chromosome != "chrX" || gc.Status != CallCalled || len(gc.Uninterpreted) > 0 {
			continue
		}
		unstated := false
		for _, item := range ro.items[gene] {
			unstated = unstated || ro.unstated[item]
		}
		if !unstated {
			continue
		}
		roM := k.observationsFor(req, true)
		m := k.callRequest(roM, CallOptions{Genes: []string{gene}, AbsentAsDefault: map[string]bool{gene: assume[gene]}, Sex: "male"})[gene]
		if m == nil || m.Status != CallCalled || len(m.Uninterpreted) > 0 || len(roM.review[gene]) > 0 {
			continue
		}
		mergeGeneCall(gc, m)
	}
}

// noteSexUnknown states, for an X-linked gene read without the patient's
// sex, how its genotype was read: as a female's (two alleles), a male's
// (one), or both (the most severe advice applies).
func noteSexUnknown(gg *GeneGenotype) {
	one, two := false, false
	for _, d := range gg.Diplotypes {
		one = one || len(d.Alleles) == 1
		two = two || len(d.Alleles) == 2
	}
	g := gg.Gene
	switch {
	case one && two:
		gg.SexAssumption = fmt.Sprintf("Patient sex not given: %s is X-linked, and a variant given without its zygosity was read both as a male's (one X chromosome, hemizygous) and as a female's (two, heterozygous); the most severe advice applies — give patient.sex.", g)
	case two:
		gg.SexAssumption = fmt.Sprintf("Patient sex not given: the %s genotype has two alleles, so it was read as a female's (two X chromosomes).", g)
	case one:
		gg.SexAssumption = fmt.Sprintf("Patient sex not given: the %s genotype has one allele, so it was read as a male's (one X chromosome, hemizygous).", g)
	default:
		gg.SexAssumption = fmt.Sprintf("Patient sex not given: %s is X-linked (a male has one X chromosome, a female two).", g)
	}
	gg.Assumptions = append(gg.Assumptions, gg.SexAssumption)
}
