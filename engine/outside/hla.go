package outside

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// twoField reduces one HLA allele name as a typer writes it ("A*02:01",
// "B*15:02:01:01", "A*11:01:01G", "HLA-B*57:01") to "HLA-<locus>*xx:yy",
// or says why it cannot: one field only, a null or other expression
// variant (suffix N, L, S, C, A, Q: its protein differs from what the first
// fields name), or not an allele name. A G group (suffix G) reads as its
// conventional two-field name, the first two fields of the group name
// (IPD-IMGT/HLA hla_nom_g.txt; ../shared/data/names/hla/README.md step 4).
func twoField(locus, name string) (string, string) {
	n := strings.TrimPrefix(strings.TrimSpace(name), "HLA-")
	loc, fields, ok := strings.Cut(n, "*")
	if !ok || loc != locus {
		return "", fmt.Sprintf("%q is not an HLA-%s allele name", name, locus)
	}
	fields = strings.TrimSuffix(fields, "G")
	parts := strings.Split(fields, ":")
	last := parts[len(parts)-1]
	if last != "" && strings.ContainsRune("NLSCAQ", rune(last[len(last)-1])) {
		return "", fmt.Sprintf("%s is an expression variant (suffix %c)", name, last[len(last)-1])
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return "", fmt.Sprintf("%q is not an HLA-%s allele name", name, locus)
		}
	}
	if len(parts) < 2 {
		return "", fmt.Sprintf("%s has one field only (two-field resolution needed)", name)
	}
	return "HLA-" + locus + "*" + parts[0] + ":" + parts[1], ""
}

// hlaCall builds the call for one locus from the two copies a typer wrote;
// an empty copy, an allele with alternatives (";" or "/") or one not
// readable at two fields makes it not passing.
func hlaCall(caller, locus, a1, a2, source string) Call {
	a1, a2 = strings.TrimSpace(a1), strings.TrimSpace(a2)
	c := Call{Gene: "HLA-" + locus, Caller: caller, Source: source}
	if a1 != "" || a2 != "" {
		c.Diplotype = a1 + "/" + a2
	}
	var why []string
	var two []string
	for _, a := range []string{a1, a2} {
		switch {
		case a == "":
			why = append(why, "a copy not typed")
		case strings.ContainsAny(a, ";,/"):
			why = append(why, "ambiguous: "+a)
		default:
			t, w := twoField(locus, a)
			if w != "" {
				why = append(why, w)
			} else {
				two = append(two, t)
			}
		}
	}
	if len(why) > 0 {
		c.Quality = strings.Join(why, "; ")
		return c
	}
	c.HLAAlleles, c.Passing = two, true
	return c
}

// readOptiType reads OptiType's <prefix>_result.tsv
// (https://github.com/FRED-2/OptiType README): header "\tA1\tA2\tB1\tB2\tC1\tC2\tReads\tObjective",
// then a row index and two alleles per class I locus. Several rows (OptiType
// run to enumerate solutions) that differ at a locus are alternatives: not
// passing for that locus.
func readOptiType(lines []string, header int) (File, error) {
	loci := []string{"A", "B", "C"}
	var rows [][]string
	var at []int
	for i := header + 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		f := strings.Split(lines[i], "\t")
		if len(f) != 9 {
			return File{}, errAt(i+1, "%d fields; an OptiType result row has 9 (index, A1, A2, B1, B2, C1, C2, Reads, Objective)", len(f))
		}
		rows, at = append(rows, f), append(at, i)
	}
	if len(rows) == 0 {
		return File{}, errAt(header+1, "OptiType header with no result row")
	}
	out := File{Format: FormatOptiType}
	for k, locus := range loci {
		a1, a2 := rows[0][1+2*k], rows[0][2+2*k]
		c := hlaCall(FormatOptiType, locus, a1, a2, lineSource(at[0]))
		var alts []string
		for _, r := range rows[1:] {
			if r[1+2*k] != a1 || r[2+2*k] != a2 {
				alts = append(alts, r[1+2*k]+"/"+r[2+2*k])
			}
		}
		if len(alts) > 0 {
			c.Diplotype = strings.Join(append([]string{c.Diplotype}, alts...), ";")
			c.Passing, c.HLAAlleles = false, nil
			c.Quality = fmt.Sprintf("OptiType reported %d solutions that differ at HLA-%s", len(rows), locus)
		}
		out.Calls = append(out.Calls, c)
	}
	return out, nil
}

// readHLALA reads HLA*LA's R1_bestguess_G.txt
// (https://github.com/DiltheyLab/HLA-LA, NA12878_example_output_G.txt):
// header Locus, Chromosome, Allele, Q1, …; one row per locus and
// chromosome (1, 2), alleles as G groups. Q1/Q2 are not interpreted here.
func readHLALA(lines []string, header int) (File, error) {
	type pair struct {
		a      [2]string
		seen   [2]bool
		source string
	}
	var order []string
	loci := map[string]*pair{}
	for i := header + 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		f := strings.Split(lines[i], "\t")
		if len(f) < 3 {
			return File{}, errAt(i+1, "%d fields; an HLA*LA row has at least Locus, Chromosome, Allele", len(f))
		}
		locus, chr, allele := strings.TrimSpace(f[0]), strings.TrimSpace(f[1]), strings.TrimSpace(f[2])
		if !isGeneSymbol(locus) {
			return File{}, errAt(i+1, "%q is not an HLA locus", locus)
		}
		if chr != "1" && chr != "2" {
			return File{}, errAt(i+1, "Chromosome %q; HLA*LA writes 1 or 2", chr)
		}
		p := loci[locus]
		if p == nil {
			p = &pair{source: lineSource(i)}
			loci[locus] = p
			order = append(order, locus)
		}
		k := int(chr[0] - '1')
		if p.seen[k] {
			return File{}, errAt(i+1, "HLA-%s chromosome %s given twice", locus, chr)
		}
		p.a[k], p.seen[k] = allele, true
	}
	if len(order) == 0 {
		return File{}, errAt(header+1, "HLA*LA header with no rows")
	}
	out := File{Format: FormatHLALA}
	for _, locus := range order {
		p := loci[locus]
		out.Calls = append(out.Calls, hlaCall(FormatHLALA, locus, p.a[0], p.a[1], p.source))
	}
	return out, nil
}

// readArcasHLA reads arcasHLA's <sample>.genotype.json
// (https://github.com/RabadanLab/arcasHLA, test/expected_output/test.genotype.json):
// an object from locus to its alleles. One allele for a locus is not
// enough to say both copies: not passing.
func readArcasHLA(data []byte, line int) (File, error) {
	var m map[string][]string
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return File{}, errAt(line, "JSON that is not an arcasHLA genotype (an object from locus to a list of alleles): %v", err)
	}
	if dec.More() {
		return File{}, errAt(line, "text after the arcasHLA genotype object")
	}
	if len(m) == 0 {
		return File{}, errAt(line, "arcasHLA genotype with no locus")
	}
	loci := make([]string, 0, len(m))
	for k := range m {
		loci = append(loci, k)
	}
	sort.Strings(loci)
	out := File{Format: FormatArcasHLA}
	for _, locus := range loci {
		if !isGeneSymbol(locus) {
			return File{}, errAt(line, "%q is not an HLA locus", locus)
		}
		al := m[locus]
		src := "$." + locus
		var c Call
		switch len(al) {
		case 2:
			c = hlaCall(FormatArcasHLA, locus, al[0], al[1], src)
		default:
			c = Call{Gene: "HLA-" + locus, Diplotype: strings.Join(al, "/"), Caller: FormatArcasHLA, Source: src,
				Quality: fmt.Sprintf("%d alleles reported; two copies needed", len(al))}
		}
		out.Calls = append(out.Calls, c)
	}
	return out, nil
}
