package smart

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/fhir"
)

// TestPlanRowsUnreadPart: an active order of which only part was
// identified (a combination with an ingredient outside the knowledge) has
// its identified drug checked and a problem row naming the part that was
// not — never silently dropped.
func TestPlanRowsUnreadPart(t *testing.T) {
	orders := []fhir.MedicationOrder{{Ref: "MedicationRequest/a", Label: "clopidogrel 75 mg + foozole 10 mg", Identified: true,
		Drugs: []fhir.DrugMatch{{Drug: "clopidogrel", Via: "name in text"}}, Unread: []string{"foozole 10 mg"}}}
	got := planRows("", orders, "p1")
	want := []row{
		{drug: "clopidogrel", orders: []string{"clopidogrel 75 mg + foozole 10 mg"}},
		{label: "clopidogrel 75 mg + foozole 10 mg", problem: "partly not in pgxsafety's knowledge: foozole 10 mg was not checked, which does not mean it is safe — review"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}
