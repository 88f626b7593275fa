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

var loadOnce = sync.OnceValues(knowledge.LoadBase)

// kb returns the engine's embedded knowledge, loaded once.
func kb(t testing.TB) *engine.Knowledge {
	t.Helper()
	b, err := loadOnce()
	if err != nil {
		t.Fatalf("load knowledge: %v", err)
	}
	return b.Engine
}

// classifierData returns the classifier's embedded knowledge, loaded once.
func classifierData(t testing.TB) *classify.Knowledge {
	t.Helper()
	b, err := loadOnce()
	if err != nil {
		t.Fatalf("load knowledge: %v", err)
	}
	return b.Classifier
}

var classifierOnce = sync.OnceValues(func() (*classify.Classifier, error) {
	b, err := loadOnce()
	if err != nil {
		return nil, err
	}
	return classify.New(b.Engine, b.Classifier)
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
