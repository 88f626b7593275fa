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
	ev.byAlert, ev.sourcesByAlert = nil, nil // nil maps read as empty
	if len(ev.matched) > 0 {
		ev.byAlert = make(map[string]*engine.Recommendation, len(ev.matched))
	}
	if len(ev.sources) > 0 {
		ev.sourcesByAlert = make(map[string][]string, len(ev.sources))
	}
	for i := range ev.res.Alerts {
		id := alertID(i)
		ev.res.Alerts[i].ID = id
		if r := ev.matched[i]; r != nil {
			ev.byAlert[id] = r
		}
		if ids, ok := ev.sources[i]; ok {
			ev.sourcesByAlert[id] = ids
		}
	}
}

// alertIDs are the first alert IDs, built once.
var alertIDs = func() (ids [16]string) {
	for i := range ids {
		ids[i] = "alert-" + strconv.Itoa(i+1)
	}
	return ids
}()

// alertID is the ID of the alert at index i: "alert-" and i+1.
func alertID(i int) string {
	if i < len(alertIDs) {
		return alertIDs[i]
	}
	return "alert-" + strconv.Itoa(i+1)
}

// addSources records the knowledge rows behind the alert about to be
// appended.
func (ev *evaluation) addSources(ids []string) {
	if ev.sources == nil {
		ev.sources = map[int][]string{}
	}
	ev.sources[len(ev.res.Alerts)] = ids
}
