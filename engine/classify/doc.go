// Package classify is the deterministic variant-classification pipeline
// behind /classifier_v2: given a missense substitution of a substrate
// protein (as an HGVS protein change or an rsID the knowledge maps to one),
// it runs four methods and assigns a tier.
//
//   - esm (the name the interface specification gives the method):
//     position-aware conservation from the per-position homolog profile of
//     the protein (classifier_profiles.json, built from Swiss-Prot by
//     knowledge/internal/profilegen) with a BLOSUM62-derived pseudocount
//     prior that dominates where a column is thin: the site-independent
//     log-odds ln(p_alt/p_ref), the column's Shannon entropy, and
//     conservation_score = p_ref/(p_ref+p_alt), with a stated confidence.
//     No protein language model and no language model of any kind takes
//     part.
//   - population: Indian and global allele frequencies, a rarity class and
//     the ClinVar significance, where the knowledge holds them.
//   - graph: the rows of the PGx knowledge graph that touch the variant, its
//     gene and the gene's drugs, each with its source.
//   - synthesis: a rule table that assigns tier 1 (actionable), 2 (likely
//     functional), 3 (uncertain) or 4 (likely benign) and names the
//     evidence that decided.
//
// The package also holds the rules that curate the substrate (which
// proteins, which cohort variants, which demonstration cases, which graph
// rows and which publications); the knowledge generator applies them and
// the tests check that the generated knowledge still follows them.
//
// The classifier's own knowledge types (Knowledge: matrix, proteins,
// protein changes, substrate, citations, conservation profiles) are
// declared here; the knowledge package loads them from its classifier_*
// files. Everything here is pure: it reads that Knowledge and the engine's
// and never does I/O. docs/classifier.md documents the formula, the constants and the
// rule table.
package classify
