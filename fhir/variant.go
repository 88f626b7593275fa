package fhir

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"

	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
	opb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/observation_go_proto"
)

// LOINC codes of the Variant components that place a variant without an
// rsID (Genomics Reporting IG STU3).
const (
	LOINCGenomicHGVS    = "81290-9" // Genomic DNA change (gHGVS)
	LOINCCodingHGVS     = "48004-6" // DNA change (c.HGVS)
	LOINCGenomicRefSeq  = "48013-7" // Genomic reference sequence ID
	LOINCAssembly       = "62374-4" // Human reference sequence assembly version
	LOINCAlleleStartEnd = "81254-5" // Genomic allele start-end
	LOINCRefAllele      = "69547-8" // Genomic ref allele
	LOINCAltAllele      = "69551-0" // Genomic alt allele
	LOINCChromosome     = "48001-2" // Cytogenetic (chromosome) location
	LOINCCoordSystem    = "92822-6" // Genomic coordinate system
	LAGRCh37            = "LA14029-5"
	LAGRCh38            = "LA26806-2"
	LAOneBased          = "LA30102-0" // 1-based character counting
)

// grch38Accessions are the RefSeq accessions of the GRCh38 chromosomes
// that carry a gene with CPIC allele definitions, as PharmCAT's allele
// definition files name them (refSeqChromosomeId, definitions of
// 2025-11-05, ../shared/data/pgx/pharmcat/definition/). A position on
// another version of the same chromosome is not on GRCh38.
var grch38Accessions = map[string]string{
	"chr1": "NC_000001.11", "chr2": "NC_000002.12", "chr4": "NC_000004.12", "chr6": "NC_000006.12",
	"chr7": "NC_000007.14", "chr8": "NC_000008.11", "chr10": "NC_000010.11", "chr12": "NC_000012.12",
	"chr13": "NC_000013.11", "chr16": "NC_000016.10", "chr19": "NC_000019.10", "chr22": "NC_000022.11",
	"chrX": "NC_000023.11",
}

// ncAccession matches a RefSeq chromosome accession (NC_000010.11).
var ncAccession = regexp.MustCompile(`^NC_0000([0-9]{2})\.([0-9]+)$`)

// positionVariant is a variant identified by position or HGVS only.
type positionVariant struct {
	hgvs      string // genomic or coding HGVS as written
	accession string // NC_… of the genomic HGVS or 48013-7
	chrom     string // chr10, chrX
	build     string // GRCh37, GRCh38 or ""
	start     string
	ref, alt  string
	clinvar   string
	// coord is the coordinate system code (92822-6), "" when not given.
	coord string
}

// readPosition gathers what places a variant given without an rsID.
func readPosition(obs *opb.Observation) positionVariant {
	var pv positionVariant
	if cc, str, ok := componentValue(obs, LOINCGenomicHGVS); ok {
		pv.hgvs = firstCodeOrText(cc, str)
	}
	if pv.hgvs == "" {
		if cc, str, ok := componentValue(obs, LOINCCodingHGVS); ok {
			pv.hgvs = firstCodeOrText(cc, str)
		}
	}
	if acc, _, ok := strings.Cut(pv.hgvs, ":"); ok && strings.HasPrefix(acc, "NC_") {
		pv.accession = acc
	}
	if cc, str, ok := componentValue(obs, LOINCGenomicRefSeq); ok && pv.accession == "" {
		if a := firstCodeOrText(cc, str); strings.HasPrefix(a, "NC_") {
			pv.accession = a
		}
	}
	if cc, _, ok := componentValue(obs, LOINCAssembly); ok {
		switch {
		case hasCode(cc, "", LAGRCh37):
			pv.build = "GRCh37"
		case hasCode(cc, "", LAGRCh38):
			pv.build = "GRCh38"
		default:
			for _, t := range conceptTexts(cc, "") {
				if u := strings.ToUpper(t); strings.Contains(u, "GRCH38") || strings.Contains(u, "HG38") {
					pv.build = "GRCh38"
				} else if strings.Contains(u, "GRCH37") || strings.Contains(u, "HG19") {
					pv.build = "GRCh37"
				}
			}
		}
	}
	if sm := ncAccession.FindStringSubmatch(pv.accession); sm != nil {
		n, _ := strconv.Atoi(sm[1])
		switch {
		case n >= 1 && n <= 22:
			pv.chrom = fmt.Sprintf("chr%d", n)
		case n == 23:
			pv.chrom = "chrX"
		case n == 24:
			pv.chrom = "chrY"
		}
		if want, ok := grch38Accessions[pv.chrom]; ok && pv.build == "" {
			if want == pv.accession {
				pv.build = "GRCh38"
			} else {
				pv.build = "not GRCh38 (its GRCh38 accession is " + want + ")"
			}
		}
	}
	if pv.chrom == "" {
		if cc, str, ok := componentValue(obs, LOINCChromosome); ok {
			for _, t := range append(conceptTexts(cc, str), firstCodeOrText(cc, "")) {
				t = strings.TrimSpace(t)
				if t == "" {
					continue
				}
				if len(t) >= 3 && strings.EqualFold(t[:3], "chr") {
					t = t[3:]
				}
				pv.chrom = "chr" + strings.ToUpper(t)
				break
			}
		}
	}
	for _, c := range obs.GetComponent() {
		if hasCode(c.GetCode(), "", LOINCAlleleStartEnd) {
			if r := c.GetValue().GetRange(); r != nil && r.GetLow() != nil {
				pv.start = r.GetLow().GetValue().GetValue()
			}
		}
	}
	if cc, _, ok := componentValue(obs, LOINCCoordSystem); ok {
		pv.coord = firstCodeOrText(cc, "")
	}
	if _, str, ok := componentValue(obs, LOINCRefAllele); ok {
		pv.ref = str
	}
	if _, str, ok := componentValue(obs, LOINCAltAllele); ok {
		pv.alt = str
	}
	if cc, _, ok := componentValue(obs, LOINCDiscreteVariant); ok {
		cs, _ := codings(cc)
		for _, c := range cs {
			if c.System == SystemClinVar {
				pv.clinvar = strings.TrimSpace("ClinVar " + c.Code + " " + c.Display)
			}
		}
	}
	return pv
}

// firstCodeOrText returns the first coding code, else the text or string.
func firstCodeOrText(cc *dpb.CodeableConcept, str string) string {
	cs, text := codings(cc)
	for _, c := range cs {
		if c.Code != "" {
			return c.Code
		}
	}
	return firstNonEmpty(text, str)
}

// describe writes the variant as it was given, with its assembly.
func (pv positionVariant) describe() string { return pv.text(true) }

// text writes the variant, with its assembly when build is set.
func (pv positionVariant) text(build bool) string {
	var parts []string
	if pv.hgvs != "" {
		parts = append(parts, pv.hgvs)
	} else if pv.accession != "" || pv.start != "" {
		s := strings.TrimSpace(pv.accession + " " + pv.start)
		if pv.ref != "" || pv.alt != "" {
			s += " " + pv.ref + ">" + pv.alt
		}
		parts = append(parts, s)
	}
	if build && (pv.build == "GRCh37" || pv.build == "GRCh38") {
		parts = append(parts, pv.build)
	}
	if pv.clinvar != "" {
		parts = append(parts, pv.clinvar)
	}
	return strings.Join(parts, ", ")
}

// reason says why the variant was not interpreted.
func (pv positionVariant) reason() string {
	switch {
	case pv.build == "GRCh37":
		return fmt.Sprintf("a variant given by position on GRCh37 (%s): pgxsafety matches genomic positions on GRCh38 only", pv.text(false))
	case strings.HasPrefix(pv.build, "not GRCh38"):
		return fmt.Sprintf("a variant given by position on an assembly that is %s (%s): pgxsafety matches genomic positions on GRCh38 only", pv.build, pv.text(false))
	case pv.hgvs != "" && !strings.HasPrefix(pv.hgvs, "NC_"):
		return fmt.Sprintf("a variant given only in transcript HGVS (%s) without a dbSNP rsID is not matched to the CPIC allele definitions", pv.hgvs)
	case pv.hgvs != "" || pv.start != "":
		return fmt.Sprintf("a variant given only by genomic position or HGVS (%s) without a dbSNP rsID is not matched to the CPIC allele definitions in this version", pv.describe())
	case pv.clinvar != "":
		return fmt.Sprintf("a variant identified by %s without a dbSNP rsID is not matched to the CPIC allele definitions", pv.clinvar)
	}
	return "no dbSNP rsID (component 81252-9), genomic position or HGVS identifies the variant"
}

// gHGVSSNV matches a genomic HGVS substitution.
var gHGVSSNV = regexp.MustCompile(`^(NC_0000[0-9]{2}\.[0-9]+):g\.([0-9]+)([ACGT])>([ACGT])$`)

// chromName matches a chromosome name the engine reads.
var chromName = regexp.MustCompile(`^chr([0-9]{1,2}|X|Y)$`)

// bases matches a VCF allele.
var bases = regexp.MustCompile(`^[ACGT]+$`)

// positionInput turns a variant given on GRCh38 by genomic HGVS or by
// position into the engine's position-level input (issue 10's matcher): a
// genomic HGVS item for an SNV (with its zygosity), a reference call for
// a "wild type" position (ref = alt), a position call with a genotype for
// an insertion or deletion whose allelic state is given. why says what
// prevents it.
func (pv positionVariant) positionInput(zyg engine.Zygosity) (item string, call *engine.PositionCall, why string) {
	if pv.build != "GRCh38" {
		return "", nil, pv.reason()
	}
	if sm := gHGVSSNV.FindStringSubmatch(pv.hgvs); sm != nil {
		return pv.hgvs, nil, ""
	}
	if pv.hgvs != "" && pv.start == "" {
		return "", nil, fmt.Sprintf("the genomic HGVS %s is not a single-base substitution; only those, or positions with ref and alt, are matched", pv.hgvs)
	}
	if pv.coord != "" && pv.coord != LAOneBased {
		return "", nil, fmt.Sprintf("the coordinate system %s is not 1-based character counting (%s)", pv.coord, LAOneBased)
	}
	if pv.coord == "" {
		return "", nil, "a genomic position without its coordinate system (92822-6) cannot be placed"
	}
	if !ncAccession.MatchString(pv.accession) || !chromName.MatchString(pv.chrom) {
		return "", nil, "a genomic position without a GRCh38 RefSeq chromosome (48013-7) cannot be placed"
	}
	pos, err := strconv.Atoi(pv.start)
	if err != nil || pos <= 0 || pos > 300_000_000 {
		return "", nil, fmt.Sprintf("the position %q is not a GRCh38 position", pv.start)
	}
	ref, alt := strings.ToUpper(pv.ref), strings.ToUpper(pv.alt)
	if !bases.MatchString(ref) || !bases.MatchString(alt) || len(ref) > 200 || len(alt) > 200 {
		return "", nil, fmt.Sprintf("the reference %q and alternate %q alleles are not bases A, C, G, T", pv.ref, pv.alt)
	}
	if ref == alt {
		return "", &engine.PositionCall{Chrom: pv.chrom, Pos: pos, Ref: ref, Genotype: "0/0"}, ""
	}
	if len(ref) == 1 && len(alt) == 1 {
		return fmt.Sprintf("%s:g.%d%s>%s", pv.accession, pos, ref, alt), nil, ""
	}
	gt := map[engine.Zygosity]string{engine.Het: "0/1", engine.Hom: "1/1", engine.Hemi: "1"}[zyg]
	if gt == "" {
		return "", nil, "an insertion or deletion by position without its allelic state (53034-5) cannot be placed"
	}
	return "", &engine.PositionCall{Chrom: pv.chrom, Pos: pos, Ref: ref, Alt: alt, Genotype: gt}, ""
}

// genesOnChromosome lists the knowledge's genes with allele definitions
// on chrom.
func (m *Mapper) genesOnChromosome(chrom string) []string {
	var out []string
	for _, g := range m.kb.Genes {
		if chrom != "" && g.Chromosome == chrom {
			out = append(out, g.Symbol)
		}
	}
	return out
}

// readVariant reads a Variant Observation: an rsID call goes to
// variants; a variant given only by position, HGVS or another id is
// present but not interpreted (failed) unless it names a gene pgxsafety
// does not cover or lies on a chromosome without one.
func (m *Mapper) readVariant(g *Genomics, res *GenomicResult, obs *opb.Observation, when int64, variants map[string][]varCall,
	calls map[string][]posCall, failed *[]failure) {
	comp := geneOf(obs)
	gene := ""
	if comp != "" {
		gene = m.geneSymbol(comp, nil)
	}
	res.Gene = firstNonEmpty(gene, comp)
	rs, present, zyg, ok := variantRsID(obs)
	if ok {
		res.Value = strings.TrimSpace(fmt.Sprintf("%s %s %s", rs, map[bool]string{true: "present", false: "absent"}[present], zyg))
		variants[rs] = append(variants[rs], varCall{present: present, zyg: zyg, res: res, when: when})
		return
	}
	pv := readPosition(obs)
	res.Value = pv.describe()
	if comp != "" && gene == "" {
		res.Note = fmt.Sprintf("gene %q is not a gene pgxsafety covers; not used", comp)
		g.Issues = append(g.Issues, Issue{Ref: res.Ref, ResourceType: "Observation", Severity: IssueInfo, Genomic: true, Message: res.Note})
		return
	}
	present, zyg = variantPresence(obs)
	item, call, why := pv.positionInput(zyg)
	switch {
	case item != "":
		variants[item] = append(variants[item], varCall{present: present, zyg: zyg, res: res, when: when})
		return
	case call != nil && (present || call.Genotype == "0/0"):
		key := fmt.Sprintf("%s:%d", call.Chrom, call.Pos)
		calls[key] = append(calls[key], posCall{call: *call, res: res, when: when})
		return
	case call != nil:
		res.Note = "reported absent: not a carrier"
		res.Used = true
		return
	}
	f := failure{res: res, gene: gene, value: res.Value, reason: why}
	if gene == "" {
		switch {
		case pv.chrom == "":
			f.any = true
		default:
			f.genes = m.genesOnChromosome(pv.chrom)
			if len(f.genes) == 0 {
				res.Note = fmt.Sprintf("on %s, where pgxsafety covers no gene; not used", pv.chrom)
				g.Issues = append(g.Issues, Issue{Ref: res.Ref, ResourceType: "Observation", Severity: IssueInfo, Genomic: true, Message: res.Note})
				return
			}
		}
	}
	*failed = append(*failed, f)
}

// variantRsID reads the dbSNP id, presence and zygosity of a Variant.
func variantRsID(obs *opb.Observation) (rs string, present bool, zyg engine.Zygosity, ok bool) {
	cc, str, found := componentValue(obs, LOINCDiscreteVariant, LOINCDbSNPLegacy)
	if !found {
		return "", false, "", false
	}
	var cands []string
	cs, text := codings(cc)
	for _, c := range cs {
		if c.System == SystemDbSNP || strings.HasPrefix(strings.ToLower(c.Code), "rs") {
			cands = append(cands, c.Code)
		}
	}
	cands = append(cands, text, str)
	for _, c := range cands {
		if n, ok := calling.NormaliseRsID(c); ok {
			rs = n
			break
		}
	}
	if rs == "" {
		return "", false, "", false
	}
	present, zyg = variantPresence(obs)
	return rs, present, zyg, true
}

// variantPresence reads a Variant's value (Present LA9633-4, Absent
// LA9634-2, or the word) and allelic state.
func variantPresence(obs *opb.Observation) (present bool, zyg engine.Zygosity) {
	present = true
	v := obs.GetValue().GetCodeableConcept()
	switch {
	case hasCode(v, "", LAAbsent):
		present = false
	case hasCode(v, "", LAPresent):
	default:
		for _, t := range valueTexts(obs) {
			if strings.EqualFold(strings.TrimSpace(t), "absent") {
				present = false
			}
		}
	}
	if zc, _, ok := componentValue(obs, LOINCZygosity); ok {
		zyg = zygosity(zc)
	}
	return present, zyg
}
