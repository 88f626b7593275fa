// Package engine is the pure domain root of pgxsafety: the types of a
// drug-safety question and its answer (Request, Result, Alert, Citation
// with a typed target), genotype interpretation, CPIC phenotype and
// recommendation evaluation, severity, confidence and completeness, and
// the India context. It reads a Knowledge that package knowledge builds
// from its own file rows and validates. It knows no transport, storage,
// wire or file format: it imports only the standard library and its own
// subpackages (a test enforces it), the spec's field names and JSON paths
// live in pgxapi and the knowledge files' format in knowledge. Adapters reach
// its evaluation through the service layer, engine/service.
package engine
