package knowledge

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

// frequencyTolerance is how far a column's stored frequencies may sum from
// the frequency scale: 20 values each rounded to the nearest unit.
const frequencyTolerance = 10

// validateProfiles checks classifier_profiles.json: its alphabet and scale,
// its provenance and sources, and for every protein unique genes, one
// column per residue, residues whose MD5 is the stated one, frequency
// vectors of 20 non-negative values summing to the scale (within rounding),
// a positive Neff, consistent counts; and that every substrate protein has
// a profile of exactly its sequence.
func (v *validator) validateProfiles(ck *classify.Knowledge) {
	f := kbfile.ClassifierProfiles
	ps := ck.Profiles
	if ps == nil || len(ps.Proteins) == 0 {
		v.add(f, 0, "proteins", "no conservation profiles")
		return
	}
	if ps.Alphabet != classify.ProfileAlphabet {
		v.add(f, 0, "alphabet", "%q, want %q", ps.Alphabet, classify.ProfileAlphabet)
	}
	if ps.FrequencyScale <= 0 {
		v.add(f, 0, "frequency_scale", "must be positive")
	}
	pv := ps.Provenance
	for name, val := range map[string]string{"database": pv.Database, "database_sha256": pv.DatabaseSHA256,
		"package": pv.Package, "licence": pv.Licence, "command": pv.Command, "queries": pv.Queries} {
		if strings.TrimSpace(val) == "" {
			v.add(f, 0, "provenance."+name, "is required")
		}
	}
	if len(pv.Tools) == 0 || len(pv.Steps) == 0 || pv.DatabaseSequences <= 0 {
		v.add(f, 0, "provenance", "tools, steps and database_sequences are required")
	}
	v.cite(f, 0, "provenance.source_ids", pv.SourceIDs)
	seen := map[string]string{} // gene → MD5
	for i, p := range ps.Proteins {
		row := i + 1
		if _, dup := seen[p.Gene]; dup {
			v.add(f, row, "gene", "duplicate profile for %s", p.Gene)
		}
		seen[p.Gene] = p.MD5
		if len(p.Columns) != p.Length {
			v.add(f, row, "columns", "%s: %d columns for length %d", p.Gene, len(p.Columns), p.Length)
		}
		if p.Sequences < 1 || p.Sequences > p.Hits+1 || p.EffectiveSequences <= 0 || p.EffectiveSequences > float64(p.Sequences) ||
			p.AlignedPositions > p.Length {
			v.add(f, row, "", "%s: inconsistent counts (hits %d, sequences %d, effective %g, aligned %d)",
				p.Gene, p.Hits, p.Sequences, p.EffectiveSequences, p.AlignedPositions)
		}
		var seq strings.Builder
		for j, c := range p.Columns {
			field := fmt.Sprintf("columns[%d]", j)
			if len(c.Ref) != 1 || !strings.Contains(standardResidues, c.Ref) {
				v.add(f, row, field+".ref", "%s position %d: %q is not a standard residue", p.Gene, j+1, c.Ref)
			}
			seq.WriteString(c.Ref)
			if c.Neff <= 0 {
				v.add(f, row, field+".neff", "%s position %d: Neff must be positive", p.Gene, j+1)
			}
			if len(c.Freq) != len(classify.ProfileAlphabet) {
				v.add(f, row, field+".freq", "%s position %d: %d frequencies", p.Gene, j+1, len(c.Freq))
				continue
			}
			sum := 0
			for _, x := range c.Freq {
				if x < 0 {
					v.add(f, row, field+".freq", "%s position %d: negative frequency", p.Gene, j+1)
				}
				sum += x
			}
			if d := sum - ps.FrequencyScale; d < -frequencyTolerance || d > frequencyTolerance {
				v.add(f, row, field+".freq", "%s position %d: frequencies sum to %d, scale %d", p.Gene, j+1, sum, ps.FrequencyScale)
			}
		}
		sum := md5.Sum([]byte(seq.String()))
		if got := strings.ToUpper(hex.EncodeToString(sum[:])); got != p.MD5 {
			v.add(f, row, "md5", "%s: the columns' residues have MD5 %s, md5 says %s", p.Gene, got, p.MD5)
		}
	}
	for _, p := range ck.Proteins {
		m, ok := seen[p.Gene]
		switch {
		case !ok:
			v.add(f, 0, "proteins", "substrate protein %s has no profile", p.Gene)
		case m != p.MD5:
			v.add(f, 0, "proteins", "the %s profile is not of the substrate sequence (MD5 %s vs %s)", p.Gene, m, p.MD5)
		}
	}
}
