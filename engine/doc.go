// Package engine is the pure domain root of pgxsafety: the types of a
// drug-safety question and its answer (Request, Result, Alert, typed
// Severity, Citation with a typed target), the knowledge's domain types
// (Knowledge and its rows) and the plain lookups over those rows (Gene,
// Allele, Source, State, TrackedVariant, …). The work is done by its
// parts, each a package: engine/calling (evidence → diplotypes →
// phenotypes), engine/drugnames (drug names → covered drugs),
// engine/population (clinical context → guideline population) and
// engine/evaluate, which joins them into a Result. The root imports none
// of them. It reads a Knowledge that package knowledge builds from its own
// file rows and validates. It knows no transport, storage, wire or file
// format: the engine imports only the standard library and its own
// subpackages (a test enforces it), the spec's field names and JSON paths
// live in pgxapi and the knowledge files' format in knowledge. Adapters
// reach the evaluation through the service layer, engine/service.
package engine
