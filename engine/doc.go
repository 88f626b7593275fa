// Package engine is the pure domain root of pgxsafety: the types of a
// drug-safety question and its answer (Request, Result, Alert, Citation
// with a typed target), genotype interpretation, CPIC phenotype and
// recommendation evaluation, severity, confidence and completeness, and
// the India context. It reads a Knowledge that package knowledge loads and
// validates. It knows no transport, storage or wire format: it imports
// only the standard library and its own subpackages (a test enforces it),
// and the spec's field names and JSON paths live in pgxapi. Adapters reach
// its evaluation through the service layer, engine/service.
package engine
