package deploy_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/telemetry"
)

var (
	metricRE   = regexp.MustCompile(`powercontext_[a-z_]+`)
	selectorRE = regexp.MustCompile(`(powercontext_[a-z_]+)\{([^}]*)\}`)
	matcherRE  = regexp.MustCompile(`([a-z_]+)\s*(=~|!~|!=|=)\s*"([^"]*)"`)
)

// checkExpr fails when expr names a metric the binary does not register, a label that metric does not have, or a
// value (or, for =~, an alternative) outside the label's bounded set.
func checkExpr(t *testing.T, where, expr string) {
	t.Helper()
	families, values := telemetry.MetricFamilies(), telemetry.LabelValues(app.WorkKinds(), skills.States)
	base := func(name string) (string, bool) {
		for _, n := range []string{name, strings.TrimSuffix(name, "_bucket"), strings.TrimSuffix(name, "_sum"),
			strings.TrimSuffix(name, "_count")} {
			if _, ok := families[n]; ok {
				return n, true
			}
		}
		return "", false
	}
	for _, name := range metricRE.FindAllString(expr, -1) {
		_, ok := base(name)
		require.True(t, ok, "%s: %s is not a metric of the binary (telemetry.MetricFamilies)", where, name)
	}
	for _, sel := range selectorRE.FindAllStringSubmatch(expr, -1) {
		name, _ := base(sel[1])
		for _, m := range matcherRE.FindAllStringSubmatch(sel[2], -1) {
			label, op, value := m[1], m[2], m[3]
			require.Contains(t, families[name], label, "%s: %s has no label %q", where, name, label)
			allowed, bounded := values[label]
			if !bounded {
				continue
			}
			alts := []string{value}
			if op == "=~" || op == "!~" {
				alts = strings.Split(value, "|")
			}
			for _, v := range alts {
				require.True(t, slices.Contains(allowed, v), "%s: %s{%s} can never be %q (values: %v)", where, name, label, v, allowed)
			}
		}
	}
}

func TestAlertRulesNameOnlyExistingMetrics(t *testing.T) {
	raw, err := os.ReadFile("observability/alerts.yaml")
	require.NoError(t, err)
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
				For   string `yaml:"for"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &rules))
	seen := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			require.NotEmpty(t, r.Alert)
			require.NotEmpty(t, r.Expr, r.Alert)
			seen[r.Alert] = true
			checkExpr(t, r.Alert, r.Expr)
		}
	}
	for _, want := range []string{"PowercontextBlockedLanes", "PowercontextNoSchedulerLeader", "PowercontextQueueAge",
		"PowercontextHTTPServerErrors"} {
		require.True(t, seen[want], "alert %s is missing", want)
	}
}

func TestGrafanaDashboardNamesOnlyExistingMetrics(t *testing.T) {
	raw, err := os.ReadFile("observability/grafana-dashboard.json")
	require.NoError(t, err)
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	require.NotEmpty(t, dash.Panels)
	used := map[string]bool{}
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			checkExpr(t, p.Title, tg.Expr)
			for _, n := range metricRE.FindAllString(tg.Expr, -1) {
				used[strings.TrimSuffix(n, "_bucket")] = true
			}
		}
	}
	// The dashboard shows every metric the binary exports.
	for name := range telemetry.MetricFamilies() {
		require.True(t, used[name], "the dashboard has no panel for %s", name)
	}
}

// TestCheckExprCanFail keeps the checker honest: a wrong name, label or value is caught.
func TestCheckExprCanFail(t *testing.T) {
	for _, bad := range []string{`powercontext_no_such_metric`, `powercontext_work_queue_depth{state="failed"}`,
		`powercontext_work_queue_depth{status="blocked"}`} {
		ft := &testing.T{}
		done := make(chan struct{})
		go func() { defer close(done); checkExpr(ft, "bad", bad) }()
		<-done
		require.True(t, ft.Failed(), "%s passed the checker", bad)
	}
}
