package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

func TestClassifyJSON(t *testing.T) {
	for _, args := range [][]string{
		{"classify", "--gene", "TPMT", "--protein-change", "p.Ala154Thr", "--json"},
		{"classify", "--gene", "NUDT15", "--variant", "rs116855232", "--json"},
		{"classify", "--demo", "cyp2c9-i359l", "--json"},
	} {
		out, stderr, err := runArgs(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		var res pgxapi.Classification
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: output is not a classification: %v\n%s", args, err, out)
		}
		if res.Tier != 1 || res.GroundingContract != engine.GroundingContract || len(res.RulesFired) == 0 {
			t.Errorf("%v: tier %d, rules %v", args, res.Tier, res.RulesFired)
		}
	}
}

func TestClassifyText(t *testing.T) {
	out, stderr, err := runArgs(t, "classify", "--gene", "DPYD", "--protein-change", "C29R")
	if err != nil {
		t.Fatalf("classify: %v\n%s", err, stderr)
	}
	for _, want := range []string{"DPYD p.Cys29Arg", "Tier 4 — likely benign", "[x] cpic_normal_function", "conservation_score", "alignment: profile of DPYD", "confidence low"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestClassifyErrors(t *testing.T) {
	tests := []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"classify"}, true, "--gene"},
		{[]string{"classify", "--demo", "x", "--gene", "TPMT"}, true, "cannot be combined"},
		{[]string{"classify", "--demo", "no-such-case"}, true, "nudt15-r139c"},
		{[]string{"classify", "--gene", "TPMT", "--protein-change", "p.Gly154Thr"}, false, "--protein-change: reference residue Gly154 does not match"},
		{[]string{"classify", "--gene", "UGT1A1", "--protein-change", "G71R"}, false, "--gene"},
		{[]string{"classify", "--gene", "TPMT", "extra"}, true, "unexpected argument"},
	}
	for _, tc := range tests {
		_, _, err := runArgs(t, tc.args...)
		if err == nil {
			t.Errorf("%v: no error", tc.args)
			continue
		}
		if errors.Is(err, errUsage) != tc.usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v (usage %t), want usage %t containing %q", tc.args, err, errors.Is(err, errUsage), tc.usage, tc.want)
		}
	}
}
