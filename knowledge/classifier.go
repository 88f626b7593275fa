package knowledge

import (
	"encoding/json"

	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/knowledge/internal/kbfile"
)

// isClassifierFile reports whether name is one of the classifier JSON
// files.
func isClassifierFile(name string) bool {
	for _, n := range kbfile.ClassifierJSONFiles {
		if n == name {
			return true
		}
	}
	return false
}

// decodeClassifier decodes the classifier files of contents, strictly;
// problems are reported as decodeFS reports them. A missing file is a
// problem: the classifier knowledge is part of the knowledge.
func decodeClassifier(contents map[string][]byte) (*classify.Knowledge, []Problem) {
	ck := &classify.Knowledge{Profiles: &classify.ConservationProfiles{}}
	targets := map[string]any{
		kbfile.ClassifierMatrix:    &ck.Matrix,
		kbfile.ClassifierProteins:  &ck.Proteins,
		kbfile.ClassifierChanges:   &ck.Changes,
		kbfile.ClassifierSubstrate: &ck.Substrate,
		kbfile.ClassifierCitations: &ck.Citations,
		kbfile.ClassifierProfiles:  ck.Profiles,
	}
	var problems []Problem
	for _, name := range kbfile.ClassifierJSONFiles {
		data, ok := contents[name]
		if !ok {
			problems = append(problems, Problem{File: name, Message: "missing file"})
			continue
		}
		if err := decodeStrict(data, targets[name]); err != nil {
			problems = append(problems, Problem{File: name, Message: err.Error()})
			_ = json.Unmarshal(data, targets[name])
		}
	}
	if _, ok := contents[kbfile.ClassifierReadme]; !ok {
		problems = append(problems, Problem{File: kbfile.ClassifierReadme, Message: "missing file"})
	}
	return ck, problems
}

// classifierStats cites the classifier rows' sources and returns the
// classifier's table counts (used by Stats).
func classifierStats(ck *classify.Knowledge, cite func([]string)) []TableCount {
	if ck == nil {
		return nil
	}
	cite(ck.Matrix.SourceIDs)
	for _, p := range ck.Proteins {
		cite(p.SourceIDs)
	}
	for _, c := range ck.Changes {
		cite(c.SourceIDs)
	}
	for _, c := range ck.Substrate.Cohort {
		cite(c.SourceIDs)
	}
	for _, e := range ck.Substrate.Graph.Edges {
		cite(e.SourceIDs)
	}
	for _, c := range ck.Citations {
		cite(c.SourceIDs)
	}
	profiles := 0
	if ck.Profiles != nil {
		cite(ck.Profiles.Provenance.SourceIDs)
		profiles = len(ck.Profiles.Proteins)
	}
	return []TableCount{
		{"classifier protein sequences", len(ck.Proteins)},
		{"classifier protein changes", len(ck.Changes)},
		{"classifier cohort variants", len(ck.Substrate.Cohort)},
		{"classifier demonstration cases", len(ck.Substrate.DemoCases)},
		{"classifier graph nodes", len(ck.Substrate.Graph.Nodes)},
		{"classifier graph edges", len(ck.Substrate.Graph.Edges)},
		{"classifier publication citations", len(ck.Citations)},
		{"classifier conservation profiles", profiles},
	}
}
