package classify_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

var loadOnce = sync.OnceValues(knowledge.Load)

// kb returns the embedded knowledge, loaded once.
func kb(t testing.TB) *engine.Knowledge {
	t.Helper()
	k, err := loadOnce()
	if err != nil {
		t.Fatalf("load knowledge: %v", err)
	}
	return k
}

var classifierOnce = sync.OnceValues(func() (*classify.Classifier, error) {
	k, err := loadOnce()
	if err != nil {
		return nil, err
	}
	return classify.New(k)
})

// classifier returns a Classifier over the embedded knowledge.
func classifier(t testing.TB) *classify.Classifier {
	t.Helper()
	c, err := classifierOnce()
	if err != nil {
		t.Fatalf("classifier: %v", err)
	}
	return c
}

// cmpIgnoreFloats ignores the float fields of Conservation, which tests
// check against the formula instead.
func cmpIgnoreFloats() cmp.Option {
	return cmpopts.IgnoreFields(classify.ResidueConservation{}, "SubstitutionTerm", "RefEntropyBits", "EntropyTerm", "Score")
}
