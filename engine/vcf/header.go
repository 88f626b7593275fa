package vcf

import (
	"fmt"
	"strconv"
	"strings"
)

// NormChrom returns the UCSC-style name of a primary human chromosome:
// "10" → "chr10", "chrX" stays, "x" → "chrX", "MT"/"M"/"chrMT" → "chrM"
// (the "chr" prefix is matched in any case). Other contig names (alternate
// haplotypes, decoys, unplaced scaffolds) are returned unchanged.
func NormChrom(s string) string {
	base := s
	if len(s) > 3 && strings.EqualFold(s[:3], "chr") {
		base = s[3:]
	}
	switch base {
	case "X", "x":
		return "chrX"
	case "Y", "y":
		return "chrY"
	case "M", "m", "MT", "mt", "Mt":
		return "chrM"
	}
	if base == "" || base[0] == '0' || len(base) > 2 {
		return s
	}
	for i := 0; i < len(base); i++ {
		if base[i] < '0' || base[i] > '9' {
			return s
		}
	}
	if n, _ := strconv.Atoi(base); n < 1 || n > 22 {
		return s
	}
	if strings.HasPrefix(s, "chr") {
		return s
	}
	return "chr" + base
}

// grch38Length and grch37Length are the lengths of the primary nuclear
// chromosomes in GRCh38 and GRCh37 (identical to UCSC hg38 and hg19). A
// ##contig line giving another length for one of them names another build.
// The mitochondrial contig is not compared: hg19's chrM differs from the
// rCRS used by GRCh37 and GRCh38.
var grch38Length = map[string]int{
	"chr1": 248956422, "chr2": 242193529, "chr3": 198295559, "chr4": 190214555,
	"chr5": 181538259, "chr6": 170805979, "chr7": 159345973, "chr8": 145138636,
	"chr9": 138394717, "chr10": 133797422, "chr11": 135086622, "chr12": 133275309,
	"chr13": 114364328, "chr14": 107043718, "chr15": 101991189, "chr16": 90338345,
	"chr17": 83257441, "chr18": 80373285, "chr19": 58617616, "chr20": 64444167,
	"chr21": 46709983, "chr22": 50818468, "chrX": 156040895, "chrY": 57227415,
}

var grch37Length = map[string]int{
	"chr1": 249250621, "chr2": 243199373, "chr3": 198022430, "chr4": 191154276,
	"chr5": 180915260, "chr6": 171115067, "chr7": 159138663, "chr8": 146364022,
	"chr9": 141213431, "chr10": 135534747, "chr11": 135006516, "chr12": 133851895,
	"chr13": 115169878, "chr14": 107349540, "chr15": 102531392, "chr16": 90354753,
	"chr17": 81195210, "chr18": 78077248, "chr19": 59128983, "chr20": 63025520,
	"chr21": 48129895, "chr22": 51304566, "chrX": 155270560, "chrY": 59373566,
}

// buildCheck refuses header lines that name a genome build other than GRCh38.
type buildCheck struct{}

// meta checks one ## line.
func (buildCheck) meta(lineNo int, line string) error {
	key, value, ok := strings.Cut(strings.TrimPrefix(line, "##"), "=")
	if !ok {
		return nil // a free-form ## line says nothing about the build
	}
	switch key {
	case "reference", "assembly":
		return buildOf(lineNo, "##"+key, value)
	case "contig":
		fields, err := structured(value)
		if err != nil {
			return &ParseError{Line: lineNo, Field: "##contig", Reason: err.Error()}
		}
		id := fields["ID"]
		if a, ok := fields["assembly"]; ok {
			if err := buildOf(lineNo, "##contig", a); err != nil {
				return err
			}
		}
		l, ok := fields["length"]
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return &ParseError{Line: lineNo, Field: "##contig", Reason: fmt.Sprintf("length %q of contig %q is not a number", short(l), short(id))}
		}
		name := NormChrom(id)
		want, primary := grch38Length[name]
		switch {
		case !primary || n == want:
			return nil
		case n == grch37Length[name]:
			return &ParseError{Line: lineNo, Field: "##contig", Reason: fmt.Sprintf("contig %s has length %d, its length in GRCh37/hg19 (GRCh38: %d): only GRCh38 is read", id, n, want)}
		default:
			return &ParseError{Line: lineNo, Field: "##contig", Reason: fmt.Sprintf("contig %s has length %d, not its GRCh38 length %d: the file is on another genome build; only GRCh38 is read", id, n, want)}
		}
	}
	return nil
}

// buildOf refuses a ##reference, ##assembly or contig assembly value that
// names a build other than GRCh38, or names GRCh38 and another build at once.
// A value naming no build it knows (a bare file name) passes.
func buildOf(lineNo int, field, value string) error {
	other, is38 := "", false
	for _, tok := range strings.FieldsFunc(strings.ToLower(value), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	}) {
		switch {
		case strings.HasPrefix(tok, "grch38"), strings.HasPrefix(tok, "hg38"), strings.HasPrefix(tok, "hs38"),
			tok == "b38", tok == "assembly38", tok == "ncbi38":
			is38 = true
		case strings.HasPrefix(tok, "grch37"), strings.HasPrefix(tok, "hg19"), strings.HasPrefix(tok, "hs37"),
			tok == "b37", tok == "v37", tok == "ncbi37", tok == "assembly19":
			other = "GRCh37/hg19"
		case strings.HasPrefix(tok, "grch36"), strings.HasPrefix(tok, "hg18"), tok == "b36", tok == "ncbi36":
			other = "NCBI36/hg18"
		case strings.HasPrefix(tok, "hg17"), tok == "ncbi35":
			other = "NCBI35/hg17"
		case strings.HasPrefix(tok, "chm13"), strings.HasPrefix(tok, "t2t"):
			other = "T2T-CHM13"
		}
	}
	switch {
	case other != "" && is38:
		return &ParseError{Line: lineNo, Field: field, Reason: fmt.Sprintf("%q names GRCh38 and %s: the genome build is ambiguous; only GRCh38 is read", short(value), other)}
	case other != "":
		return &ParseError{Line: lineNo, Field: field, Reason: fmt.Sprintf("%q names %s: only GRCh38 is read", short(value), other)}
	}
	return nil
}

// structured parses the <key=value,...> form of a structured meta line;
// values may be double-quoted (with \" and \\ escapes).
func structured(v string) (map[string]string, error) {
	if len(v) < 2 || v[0] != '<' || v[len(v)-1] != '>' {
		return nil, fmt.Errorf("%q is not of the form <ID=...,...>", short(v))
	}
	v = v[1 : len(v)-1]
	out := map[string]string{}
	for len(v) > 0 {
		eq := strings.IndexByte(v, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("%q is not a key=value list", short(v))
		}
		key := v[:eq]
		v = v[eq+1:]
		var val string
		if strings.HasPrefix(v, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' && i+1 < len(v) {
					i++
				}
				b.WriteByte(v[i])
			}
			if i >= len(v) {
				return nil, fmt.Errorf("unterminated quoted value of %s", short(key))
			}
			val = b.String()
			v = v[i+1:]
			if v != "" && v[0] != ',' {
				return nil, fmt.Errorf("text after the quoted value of %s", short(key))
			}
		} else {
			end := strings.IndexByte(v, ',')
			if end < 0 {
				end = len(v)
			}
			val = v[:end]
			v = v[end:]
		}
		v = strings.TrimPrefix(v, ",")
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("key %s appears twice", short(key))
		}
		out[key] = val
	}
	return out, nil
}
