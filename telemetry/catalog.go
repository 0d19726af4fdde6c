package telemetry

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// descRE reads a metric's name and variable labels from prometheus.Desc.String(), the only public view of them.
// TestMetricFamiliesListsEveryMetric fails if the client library ever changes that format.
var descRE = regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)

// MetricFamilies lists every metric this package registers, by full name, with its label names (sorted). Dashboards
// and alert rules under deploy/observability are checked against it, so they never name a metric that does not
// exist.
func MetricFamilies() map[string][]string {
	out := map[string][]string{}
	ch := make(chan *prometheus.Desc, 64)
	m := newMetrics(prometheus.NewRegistry())
	go func() {
		for _, c := range m.collectors() {
			c.Describe(ch)
		}
		close(ch)
	}()
	for d := range ch {
		sm := descRE.FindStringSubmatch(d.String())
		if sm == nil {
			continue
		}
		var labels []string
		for _, l := range strings.Split(sm[2], ",") {
			if l = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(l), "c("), ")"); l != "" {
				labels = append(labels, l)
			}
		}
		sort.Strings(labels)
		out[sm[1]] = labels
	}
	return out
}

// LabelValues is every value each label can take in a process built with these work kinds (Config.Kinds) and
// publication states (Config.PublicationStates): the bounded sets of labels.go, KindLabels(kinds) and the states. A
// route label is any registered route template, so it is not listed.
func LabelValues(kinds, publicationStates []string) map[string][]string {
	return map[string][]string{
		"kind": KindLabels(kinds), "status": QueueStatuses, "role": Roles, "method": Methods, "status_class": StatusClasses,
		"provider": ProviderNames, "error_category": ErrorCategories, "state": slices.Clone(publicationStates),
		"outcome": union(EnqueueOutcomes, AttemptOutcomes, LeaseOutcomes, LeadershipOutcomes, ProviderOutcomes),
	}
}

func union(sets ...[]string) []string {
	var out []string
	for _, s := range sets {
		out = append(out, s...)
	}
	return out
}
