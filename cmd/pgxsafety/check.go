package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// listFlag is a repeatable flag whose values are collected in order.
type listFlag []string

// String joins the values (flag.Value).
func (l *listFlag) String() string { return strings.Join(*l, " ") }

// Set appends one value (flag.Value).
func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// keyValues parses KEY=VALUE items into a map; flag names the flag for
// error messages.
func keyValues(flag string, items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(items))
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, usageError("--%s: %q is not KEY=VALUE", flag, it)
		}
		if _, dup := m[k]; dup {
			return nil, usageError("--%s: %s given twice", flag, k)
		}
		m[k] = v
	}
	return m, nil
}

// optionalFloat parses an optional numeric flag ("" means absent).
func optionalFloat(flag, v string) (*float64, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return nil, usageError("--%s: %q is not a number", flag, v)
	}
	return &f, nil
}

const checkSynopsis = `check --drug DRUG [--variants rs1,rs2] [--zygosity rs1=hom,...]
       [--diplotype GENE=*1/*2]... [--hla HLA-B*15:02=positive]... [--genes-tested G1,G2]
       [--state S] [--ethnicity E] [--indication I] [--indication-code SYSTEM|CODE]...
       [--sex male|female] [--age N] [--months-on-drug N] [--outside-calls FILE]... [--json]

Evaluates one check offline against the embedded knowledge, exactly as
POST /pgx/check does, and prints the result. No audit entry is written: an
offline answer never leaves this machine through the service.`

func runCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", stderr, checkSynopsis)
	var (
		drug        = fs.String("drug", "", "drug name (required)")
		variants    = fs.String("variants", "", "comma-separated rsIDs found in the patient")
		zygosity    = fs.String("zygosity", "", "comma-separated RSID=het|hom|hemi for rsIDs of --variants")
		genesTested = fs.String("genes-tested", "", "comma-separated genes the lab tested (unreported positions are reference)")
		state       = fs.String("state", "", "Indian state or union territory")
		ethnicity   = fs.String("ethnicity", "", "ethnic group or community")
		indication  = fs.String("indication", "", "clinical indication, free text")
		sex         = fs.String("sex", "", "patient sex: male or female")
		age         = fs.String("age", "", "patient age in years")
		months      = fs.String("months-on-drug", "", "months the patient has taken the drug")
		asJSON      = fs.Bool("json", false, "print the result as indented JSON")
		diplotypes  listFlag
		hla         listFlag
		indCodes    listFlag
	)
	fs.Var(&indCodes, "indication-code", "SYSTEM|CODE, e.g. http://hl7.org/fhir/sid/icd-10|I21.4 or ICD-10-CM|I25.10 (repeatable)")
	fs.Var(&diplotypes, "diplotype", "GENE=DIPLOTYPE, e.g. CYP2C19=*2/*17 (repeatable)")
	fs.Var(&hla, "hla", "ALLELE=positive|negative, e.g. HLA-B*15:02=positive (repeatable)")
	var outsideFiles listFlag
	fs.Var(&outsideFiles, "outside-calls", "a caller's output read as the check's outside_calls (repeatable): PharmCAT outside-call TSV, Cyrius, Aldy, StellarPGx, OptiType, HLA*LA, arcasHLA")
	if err := parseFlags(fs, args); err != nil {
		return err
	}

	req := engine.Request{
		Drug:        *drug,
		Variants:    splitList(*variants),
		GenesTested: splitList(*genesTested),
		State:       *state,
		Ethnicity:   *ethnicity,
		Indication:  *indication,
	}
	zyg, err := keyValues("zygosity", splitList(*zygosity))
	if err != nil {
		return err
	}
	for rs, z := range zyg {
		if req.Zygosity == nil {
			req.Zygosity = map[string]engine.Zygosity{}
		}
		req.Zygosity[rs] = engine.Zygosity(z)
	}
	if req.Diplotypes, err = keyValues("diplotype", diplotypes); err != nil {
		return err
	}
	if req.HLA, err = keyValues("hla", hla); err != nil {
		return err
	}
	for _, ic := range indCodes {
		system, code, ok := strings.Cut(ic, "|")
		if !ok || strings.TrimSpace(system) == "" || strings.TrimSpace(code) == "" {
			return usageError("--indication-code %q: want SYSTEM|CODE", ic)
		}
		req.IndicationCodes = append(req.IndicationCodes, engine.Coding{System: strings.TrimSpace(system), Code: strings.TrimSpace(code)})
	}
	for _, name := range outsideFiles {
		b, err := readBounded(name, calling.MaxOutsideCallBytes)
		if err != nil {
			return fmt.Errorf("check: --outside-calls: %w", err)
		}
		req.OutsideCalls = append(req.OutsideCalls, string(b))
	}
	ageYears, err := optionalFloat("age", *age)
	if err != nil {
		return err
	}
	monthsOnDrug, err := optionalFloat("months-on-drug", *months)
	if err != nil {
		return err
	}
	if *sex != "" || ageYears != nil || monthsOnDrug != nil {
		req.Patient = &engine.Patient{Sex: *sex, AgeYears: ageYears, MonthsOnDrug: monthsOnDrug}
	}

	kb, err := loadKnowledge(stderr)
	if err != nil {
		return err
	}
	res, err := kb.Evaluate(req)
	if err != nil {
		return fieldErrors(err, "invalid input:", sameName)
	}
	if *asJSON {
		return writeIndentedJSON(stdout, pgxapi.ResultOf(res))
	}
	_, err = io.WriteString(stdout, formatResult(res))
	return err
}

// formatResult renders a result as readable text.
func formatResult(res engine.Result) string {
	wire := pgxapi.ResultOf(res) // the severity and category names of the REST answer
	var b strings.Builder
	field := func(indent, label, value string) {
		if value != "" {
			fmt.Fprintf(&b, "%s%-18s %s\n", indent, label+":", value)
		}
	}
	drug := res.Drug
	if res.DrugNormalised != "" && res.DrugNormalised != res.Drug {
		drug += " (" + res.DrugNormalised + ")"
	}
	if !res.DrugRecognised {
		drug += " — not recognised: nothing was checked for it (review)"
	}
	field("", "Drug", drug)
	if r := res.DrugReading; r != nil && r.Via != "" && r.Via != "name" {
		read := r.Via
		if r.Matched != "" {
			read += " " + r.Matched
		}
		field("", "Read as", read)
	}
	if r := res.DrugReading; r != nil && len(r.Unrecognised) > 0 {
		field("", "Not checked", strings.Join(r.Unrecognised, ", "))
	}
	if len(res.DidYouMean) > 0 {
		field("", "Did you mean", strings.Join(res.DidYouMean, ", "))
	}
	field("", "Sensitivity", res.Sensitivity)
	field("", "Overall severity", wire.OverallSeverity)
	field("", "Confidence", res.Confidence)
	for _, g := range res.Genotype {
		field("", "Genotype", genotypeText(g))
	}

	var assumptions []string
	for i, a := range res.Alerts {
		fmt.Fprintf(&b, "\nAlert %d: %s  %s  (%s)\n", i+1, wire.Alerts[i].Severity, strings.TrimSpace(a.Drug+" "+a.Gene), wire.Alerts[i].Category)
		for _, g := range a.Genotype {
			field("  ", "Genotype", genotypeText(g))
		}
		if a.Variant != "" {
			v := a.Variant
			if a.StarAllele != "" {
				v += " " + a.StarAllele
			}
			field("  ", "Variant", v)
		}
		field("  ", "Summary", a.Message)
		field("  ", "Recommendation", a.Recommendation)
		if a.Action != a.Recommendation {
			field("  ", "Action", a.Action)
		}
		field("  ", "Classification", a.Classification)
		field("  ", "Alternatives", strings.Join(a.Alternatives, ", "))
		if a.Guideline != nil {
			g := a.Guideline.Name
			if a.Guideline.URL != "" {
				g += " <" + a.Guideline.URL + ">"
			}
			field("  ", "Guideline", g)
		}
		field("  ", "Evidence level", a.EvidenceLevel)
		if a.TestRecommended {
			field("  ", "Test", "genotype test recommended")
		}
		assumptions = append(assumptions, a.Assumptions...)
	}
	if len(res.Alerts) == 0 {
		b.WriteString("\nNo alerts.\n")
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "  - %s\n", it)
		}
	}
	var alts []string
	for _, a := range res.SaferAlternatives {
		alts = append(alts, a.Name+": "+a.Rationale)
	}
	list("Safer alternatives", alts)
	list("Unrecognised variants", res.UnrecognisedVariants)
	list("Warnings", res.Warnings)
	list("Assumptions", dedupe(assumptions))
	fmt.Fprintf(&b, "\nKnowledge: %s\n", res.KnowledgeVersion)
	return b.String()
}

func genotypeText(g engine.GenotypeCall) string {
	parts := []string{g.Gene}
	if g.Diplotype != "" {
		parts = append(parts, g.Diplotype)
	}
	s := strings.Join(parts, " ")
	if g.Phenotype != "" {
		s += " — " + g.Phenotype
	}
	if g.ActivityScore != "" {
		s += " (activity score " + g.ActivityScore + ")"
	}
	return s
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// readBounded reads the file name, refusing one larger than max bytes.
func readBounded(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	return b, nil
}
