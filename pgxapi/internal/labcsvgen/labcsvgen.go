// Package labcsvgen writes synthetic lab CSV files (the POST /pgx/batch_csv
// format) for tests and benchmarks: deterministic for a seed, shaped like
// one lab's batch (most patients from the lab's home state, a drug with the
// rsIDs of its genes that were detected, an indication that fits the drug),
// with bad rows of every kind at chosen data rows. The rows are test input,
// not clinical facts: drug names and rsIDs are ones the knowledge covers,
// chosen so that the engine has something to say.
package labcsvgen

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Header is the lab CSV header line.
const Header = "drug,variants,state,ethnicity,indication,patient_ref"

// BadKind is one kind of bad row and the error the service reports for it.
type BadKind struct {
	Name  string
	Code  string
	Field string
	// Line is the row as written (%s is replaced by the patient ref).
	Line string
}

// BadKinds are the kinds of bad rows, in the order Options.BadRows cycles
// through them.
var BadKinds = []BadKind{
	{Name: "missing drug", Code: "missing_value", Field: "drug", Line: ",rs4244285,Tamil Nadu,,stable angina,%s"},
	{Name: "blank drug", Code: "missing_value", Field: "drug", Line: "   ,,Kerala,,atrial fibrillation,%s"},
	{Name: "bad rsID", Code: "invalid_value", Field: "variants[0]", Line: "clopidogrel,rs42442B5,Tamil Nadu,,stable angina,%s"},
	{Name: "bad second rsID", Code: "invalid_value", Field: "variants[1]", Line: "warfarin,rs1057910;VKORC1-1639,Kerala,,atrial fibrillation,%s"},
	{Name: "too few columns", Code: "column_count", Field: "patient_ref", Line: "codeine,rs3892097,Tamil Nadu,,%s"},
	{Name: "unquoted comma", Code: "column_count", Field: "record", Line: "clopidogrel,,Tamil Nadu,,acute coronary syndrome, PCI,%s"},
	{Name: "bare quote", Code: "bad_quoting", Field: "indication", Line: "clopidogrel,,Tamil Nadu,,5\" stent,%s"},
	{Name: "text after closing quote", Code: "bad_quoting", Field: "indication", Line: "clopidogrel,,Tamil Nadu,,\"ACS\" PCI,%s"},
	{Name: "unterminated quote", Code: "bad_quoting", Field: "indication", Line: "clopidogrel,,Tamil Nadu,,\"ACS with stent,%s"},
	{Name: "not UTF-8", Code: "invalid_encoding", Field: "patient_ref", Line: "clopidogrel,,Tamil Nadu,,ACS,%s-\xff"},
}

// Options shapes a file.
type Options struct {
	// Rows is the number of data rows.
	Rows int
	// Seed selects the pseudo-random sequence.
	Seed uint64
	// BadRows are the 1-based data rows written as bad rows; the i-th
	// uses BadKinds[i%len(BadKinds)].
	BadRows []int
	// BlankAfter, when > 0, writes a blank line after that data row.
	BlankAfter int
	// Distinct makes every row's input unique (the indication carries the
	// row number), so no two rows share a result.
	Distinct bool
	// CRLF ends lines with \r\n.
	CRLF bool
}

type drugProfile struct {
	drug        string
	rsids       []string
	indications []string
}

var profiles = []drugProfile{
	{"clopidogrel", []string{"rs4244285", "rs4986893", "rs12248560"}, []string{"acute coronary syndrome, PCI", "stable angina", "ischaemic stroke"}},
	{"omeprazole", []string{"rs4244285", "rs12248560"}, []string{"GERD", "H. pylori eradication"}},
	{"pantoprazole", []string{"rs4244285", "rs12248560"}, []string{"GERD"}},
	{"warfarin", []string{"rs1799853", "rs1057910", "rs9923231", "rs2108622"}, []string{"atrial fibrillation", "deep vein thrombosis"}},
	{"codeine", []string{"rs3892097", "rs1065852", "rs28371725"}, []string{"post-operative pain"}},
	{"tramadol", []string{"rs3892097", "rs28371725"}, []string{"post-operative pain", "chronic back pain"}},
	{"amitriptyline", []string{"rs3892097", "rs4244285"}, []string{"depression", "neuropathic pain"}},
	{"sertraline", []string{"rs4244285", "rs12248560"}, []string{"depression"}},
	{"escitalopram", []string{"rs4244285", "rs12248560"}, []string{"generalised anxiety disorder"}},
	{"simvastatin", []string{"rs4149056"}, []string{"hypercholesterolaemia"}},
	{"atorvastatin", []string{"rs4149056"}, []string{"hypercholesterolaemia"}},
	{"azathioprine", []string{"rs1142345", "rs1800460", "rs116855232"}, []string{"inflammatory bowel disease"}},
	{"mercaptopurine", []string{"rs1142345", "rs116855232"}, []string{"acute lymphoblastic leukaemia"}},
	{"capecitabine", []string{"rs3918290", "rs75017182", "rs67376798"}, []string{"colorectal cancer"}},
	{"fluorouracil", []string{"rs3918290", "rs75017182"}, []string{"head and neck cancer"}},
	{"tacrolimus", []string{"rs776746"}, []string{"renal transplant"}},
	{"efavirenz", []string{"rs3745274", "rs28399499"}, []string{"HIV"}},
	{"phenytoin", []string{"rs1057910", "rs1799853"}, []string{"epilepsy"}},
	{"carbamazepine", nil, []string{"epilepsy", "trigeminal neuralgia"}},
	{"primaquine", []string{"rs5030868", "rs137852339"}, []string{"Plasmodium vivax malaria"}},
	{"dapsone", []string{"rs5030868"}, []string{"leprosy"}},
	{"ondansetron", []string{"rs3892097"}, []string{"chemotherapy-induced nausea"}},
	{"allopurinol", nil, []string{"gout"}},
}

var (
	// homeStates: a lab sees mostly its own state and its neighbours.
	homeStates  = []string{"Tamil Nadu", "Tamil Nadu", "Tamil Nadu", "Tamil Nadu", "Tamil Nadu", "Tamil Nadu", "Kerala", "Kerala", "Karnataka", "Puducherry"}
	otherStates = []string{"Maharashtra", "Delhi", "West Bengal", "Odisha", "Gujarat", "Punjab", "Bihar", "Assam", "Telangana", "Andhra Pradesh"}
	ethnicities = []string{"Tamil", "Parsi", "Punjabi Sikh", "Kashmiri", "Gujarati"}
)

// rng is splitmix64: tiny, and its sequence never changes.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// Write writes the header and opt.Rows data rows to w.
func Write(w io.Writer, opt Options) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	eol := "\n"
	if opt.CRLF {
		eol = "\r\n"
	}
	bad := make(map[int]int, len(opt.BadRows))
	for i, row := range opt.BadRows {
		bad[row] = i % len(BadKinds)
	}
	r := &rng{s: opt.Seed}
	var sb strings.Builder
	bw.WriteString(Header + eol)
	for row := 1; row <= opt.Rows; row++ {
		ref := fmt.Sprintf("LAB-%07d", row)
		if k, ok := bad[row]; ok {
			bw.WriteString(fmt.Sprintf(BadKinds[k].Line, ref) + eol)
		} else {
			p := profiles[r.intn(len(profiles))]
			sb.Reset()
			for _, rs := range p.rsids {
				if r.intn(100) < 18 {
					if sb.Len() > 0 {
						sb.WriteByte(';')
					}
					sb.WriteString(rs)
				}
			}
			variants := sb.String()
			state := homeStates[r.intn(len(homeStates))]
			if r.intn(100) < 8 {
				state = otherStates[r.intn(len(otherStates))]
			}
			eth := ""
			if r.intn(100) < 12 {
				eth = ethnicities[r.intn(len(ethnicities))]
			}
			ind := p.indications[r.intn(len(p.indications))]
			if opt.Distinct {
				ind = fmt.Sprintf("%s (request %d)", ind, row)
			}
			if strings.ContainsAny(ind, ",\"") {
				ind = `"` + strings.ReplaceAll(ind, `"`, `""`) + `"`
			}
			bw.WriteString(p.drug + "," + variants + "," + state + "," + eth + "," + ind + "," + ref + eol)
		}
		if row == opt.BlankAfter {
			bw.WriteString(eol)
		}
	}
	return bw.Flush()
}

// Lab1000 are the options of testdata/csv/lab_1000_10bad.csv: 1,000 data
// rows of which exactly 10 are bad, one of each kind.
var Lab1000 = Options{
	Rows:       1000,
	Seed:       2025,
	BadRows:    []int{37, 112, 205, 298, 401, 517, 623, 734, 856, 967},
	BlankAfter: 500,
}
