package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

const classifySynopsis = `classify --gene GENE (--protein-change CHANGE | --variant RSID) [--json]
       classify --demo CASE [--json]

Classifies one missense substitution of a substrate protein (or of a protein
classified from its homolog profile alone) offline, exactly
as POST /classifier_v2/classify does, and prints the result: the four
methods (esm conservation, population, graph, synthesis) and the tier.
CHANGE is an HGVS protein change (p.Ala154Thr, p.(Ala154Thr)) or its
one-letter form (A154T); RSID an rsID the knowledge maps to a protein change.
--demo runs a demonstration case (see GET /classifier_v2/demo_cases). No
audit entry is written: an offline answer never leaves this machine through
the service.`

func runClassify(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("classify", stderr, classifySynopsis)
	var (
		gene   = fs.String("gene", "", "gene: a substrate protein (CYP2C9, DPYD, NUDT15, SLCO1B1, TPMT) or a profiled one (CYP2C19, CYP2D6, G6PD, VKORC1)")
		change = fs.String("protein-change", "", "HGVS protein change, e.g. p.Ala154Thr or A154T")
		rsid   = fs.String("variant", "", "rsID mapped to a protein change by the knowledge, e.g. rs116855232")
		demo   = fs.String("demo", "", "demonstration case id, e.g. nudt15-r139c")
		asJSON = fs.Bool("json", false, "print the result as indented JSON")
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *demo != "" && (*gene != "" || *change != "" || *rsid != "") {
		return usageError("classify: --demo cannot be combined with --gene, --protein-change or --variant")
	}
	if *demo == "" && *gene == "" {
		fs.Usage()
		return usageError("classify: --gene (with --protein-change or --variant) or --demo is required")
	}

	b, err := loadBase(stderr)
	if err != nil {
		return err
	}
	cls, err := classify.New(b.Engine, b.Classifier)
	if err != nil {
		return err
	}
	req := classify.Request{Gene: *gene, ProteinChange: *change, Variant: *rsid}
	if *demo != "" {
		d, ok := cls.DemoCase(*demo)
		if !ok {
			var ids []string
			for _, c := range cls.DemoCases() {
				ids = append(ids, c.ID)
			}
			return usageError("classify: unknown demonstration case %q; valid: %s", *demo, strings.Join(ids, ", "))
		}
		req = classify.DemoRequest(d)
	}
	res, err := cls.Classify(req)
	if err != nil {
		return fieldErrors(err, "invalid input:", flagName)
	}
	if *asJSON {
		return writeIndentedJSON(stdout, pgxapi.ClassificationOf(res))
	}
	_, err = io.WriteString(stdout, formatClassification(res))
	return err
}

// flagName maps a request field to the flag that sets it.
func flagName(field string) string {
	switch field {
	case "protein_change":
		return "--protein-change"
	case "variant":
		return "--variant"
	case "gene":
		return "--gene"
	}
	return field
}

// formatClassification renders a classification as readable text.
func formatClassification(res classify.Result) string {
	var b strings.Builder
	field := func(label, value string) {
		if value != "" {
			fmt.Fprintf(&b, "%-20s %s\n", label+":", value)
		}
	}
	v := res.Variant
	field("Variant", fmt.Sprintf("%s %s (%s) on %s, %d residues; reference verified", v.Gene, v.HGVSp, v.Short, v.UniProt, v.ProteinLength))
	for _, kv := range v.KnownVariants {
		desc := fmt.Sprintf("%s %s>%s %s", kv.RsID, kv.Ref, kv.Alt, kv.AlleleLabel)
		if kv.Function != "" {
			desc += fmt.Sprintf(" — CPIC %s: %s", strings.Join(kv.Alleles, ", "), kv.Function)
		}
		field("Known variant", desc)
	}
	evidence := strings.Join(res.Synthesis.DecidingEvidence, " + ")
	if evidence == "" {
		evidence = "no rule's evidence"
	}
	fmt.Fprintf(&b, "\n%s (decided by %s; evidence: %s)\n", res.TierLabel, res.Synthesis.DecidedBy, evidence)
	for _, r := range res.Synthesis.Rules {
		mark := " "
		if r.Fired {
			mark = "x"
		}
		fmt.Fprintf(&b, "  [%s] %-30s tier %d  %s\n", mark, r.ID, r.Tier, r.Values)
	}
	e := res.ESM
	fmt.Fprintf(&b, "\nConservation (esm):  conservation_score %.4f; site log-odds ln(p_%s/p_%s) = ln(%.6f/%.6f) = %.4f; BLOSUM62 %d\n",
		e.Score, e.Alt, e.Ref, e.PAlt, e.PRef, e.LogOdds, e.BLOSUM62)
	fmt.Fprintf(&b, "                     column %d: entropy %.4f bits, conservation %.4f, Neff %.2f, prior weight %.2f\n",
		e.Position, e.ColumnEntropyBits, e.ColumnConservation, e.ColumnNeff, e.PriorWeight)
	fmt.Fprintf(&b, "                     confidence %s — %s\n", e.Confidence, e.ConfidenceReason)
	alignment := "none — "
	if e.Alignment.Available {
		alignment = ""
	}
	fmt.Fprintf(&b, "                     alignment: %s%s\n", alignment, e.Alignment.Reason)
	p := res.Population
	fmt.Fprintf(&b, "Population:          rarity %s", p.Rarity)
	if p.Note != "" {
		fmt.Fprintf(&b, " (%s)", p.Note)
	}
	b.WriteString("\n")
	for _, r := range p.Records {
		var parts []string
		if r.AFIndia != nil {
			parts = append(parts, fmt.Sprintf("af_india %g (%s)", *r.AFIndia, r.AFIndiaKind))
		}
		if r.AFGlobal != nil {
			parts = append(parts, fmt.Sprintf("af_global %g", *r.AFGlobal))
		}
		if r.ClinVarSignificance != "" {
			parts = append(parts, fmt.Sprintf("ClinVar %s (release %s)", r.ClinVarSignificance, r.ClinVarRelease))
		}
		parts = append(parts, r.Notes...)
		fmt.Fprintf(&b, "                     %s: %s\n", r.RsID, strings.Join(parts, "; "))
	}
	fmt.Fprintf(&b, "Graph:               %d rows, %d nodes (%s)\n", res.Graph.EdgeCount, res.Graph.NodeCount, res.GroundingContract)
	for _, r := range res.Graph.Rows {
		fmt.Fprintf(&b, "                     %s —%s→ %s\n", r.From, r.Relation, r.To)
	}
	for _, w := range res.Warnings {
		field("Warning", w)
	}
	fmt.Fprintf(&b, "\nEngine: %s  Knowledge: %s\n", res.EngineVersion, res.KnowledgeVersion)
	return b.String()
}
