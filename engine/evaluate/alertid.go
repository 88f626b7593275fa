package evaluate

import (
	"strconv"

	"github.com/pgxsafety/pgxsafety/engine"
)

// identifyAlerts gives every alert of the answer its ID, in the order the
// alerts were found, and keys the recommendations that produced them by
// that ID. It runs before the alerts are sorted, so that everything later
// (alternatives, citations) finds an alert's recommendation by ID, never
// by position.
func (ev *evaluation) identifyAlerts() {
	ev.byAlert = make(map[string]*engine.Recommendation, len(ev.matched))
	ev.sourcesByAlert = make(map[string][]string, len(ev.sources))
	for i := range ev.res.Alerts {
		id := "alert-" + strconv.Itoa(i+1)
		ev.res.Alerts[i].ID = id
		if r := ev.matched[i]; r != nil {
			ev.byAlert[id] = r
		}
		if ids, ok := ev.sources[i]; ok {
			ev.sourcesByAlert[id] = ids
		}
	}
}
