package engine

import "fmt"

// MaxWarnings is the most warnings one answer (a check, a VCF sample, a
// file's summary) lists; the rest are counted in a last warning, so that
// no input can make an answer grow with its own repetitions.
const MaxWarnings = 100

// CapWarnings returns ws cut to MaxWarnings: the first MaxWarnings−1 and
// a last one saying how many were cut. ws is returned as is when short
// enough.
func CapWarnings(ws []string) []string {
	if len(ws) <= MaxWarnings {
		return ws
	}
	cut := len(ws) - (MaxWarnings - 1)
	out := append(ws[:MaxWarnings-1:MaxWarnings-1], fmt.Sprintf("%d more warnings are not shown (at most %d are listed per answer)", cut, MaxWarnings))
	return out
}
