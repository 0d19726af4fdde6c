package deploy_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/auth"
)

// EnvRequireTools is a comma list of external tools a test must find instead of skipping (CI: kubectl,atlas).
const EnvRequireTools = "PC_TEST_REQUIRE_TOOLS"

// tool returns the path of an external command, skipping the test when it is missing unless EnvRequireTools names
// it.
func tool(t *testing.T, name string, candidates ...string) string {
	t.Helper()
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			abs, _ := filepath.Abs(c)
			return abs
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if slices.Contains(strings.Split(os.Getenv(EnvRequireTools), ","), name) {
		t.Fatalf("%s is required by %s but was not found", name, EnvRequireTools)
	}
	t.Skipf("%s not found (set %s=%s to require it)", name, EnvRequireTools, name)
	return ""
}

// known reports whether the binary reads an environment variable.
func known(name string) bool {
	return slices.Contains(app.Environment(), name) || strings.HasPrefix(name, "OTEL_")
}

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(b, &doc), path)
	return doc
}

func m(v any) map[string]any {
	out, _ := v.(map[string]any)
	return out
}

func list(v any) []any {
	out, _ := v.([]any)
	return out
}

// composeEnv returns a compose service's environment as a map (both the mapping and the list form).
func composeEnv(svc map[string]any) map[string]string {
	out := map[string]string{}
	switch env := svc["environment"].(type) {
	case map[string]any:
		for k, v := range env {
			out[k] = toString(v)
		}
	case []any:
		for _, e := range env {
			k, v, _ := strings.Cut(toString(e), "=")
			out[k] = v
		}
	}
	return out
}

func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		b, _ := yaml.Marshal(x)
		return strings.TrimSpace(string(b))
	}
}

func isPowercontext(svc map[string]any) bool {
	img, _ := svc["image"].(string)
	return strings.Contains(img, "powercontext")
}

var composeVarRE = regexp.MustCompile(`\$\{([A-Z0-9_]+)`)

// TestComposeFleets: each compose file runs a migration job with its own account, then 2 api, 1 scheduler and
// 2 workers on the application account, every one with a health check and only variables the binary reads.
func TestComposeFleets(t *testing.T) {
	for _, c := range []struct{ file, db, scheme string }{
		{"compose/postgres.yaml", "postgres", "postgres://"},
		{"compose/mariadb.yaml", "mariadb", "mysql://"},
	} {
		t.Run(c.file, func(t *testing.T) {
			doc := readYAML(t, c.file)
			services := m(doc["services"])
			require.NotNil(t, services)
			dbSvc := m(services[c.db])
			require.NotNil(t, dbSvc, "database service %s", c.db)
			require.NotNil(t, m(dbSvc["healthcheck"])["test"], "the database has a health check")

			migrate := m(services["migrate"])
			require.True(t, isPowercontext(migrate))
			require.Equal(t, []any{"server", "migrate"}, migrate["command"])
			require.Equal(t, "service_healthy", m(m(migrate["depends_on"])[c.db])["condition"])
			migrateURL := composeEnv(migrate)["POWERCONTEXT_DATABASE_URL"]
			require.True(t, strings.HasPrefix(migrateURL, c.scheme+"powercontext_migrator:"), migrateURL)

			replicas := map[string]int{}
			for name, raw := range services {
				svc := m(raw)
				if !isPowercontext(svc) {
					continue
				}
				env := composeEnv(svc)
				for k := range env {
					require.True(t, known(k), "%s: service %s sets %s, which the binary does not read", c.file, name, k)
				}
				if name == "migrate" {
					continue
				}
				role := env["POWERCONTEXT_DEPLOYMENT_ROLE"]
				require.Equal(t, name, role, "service %s runs role %s", name, role)
				require.Equal(t, "distributed", env["POWERCONTEXT_DEPLOYMENT_MODE"])
				require.True(t, strings.HasPrefix(env["POWERCONTEXT_DATABASE_URL"], c.scheme+"powercontext_app:"),
					"%s uses the application account", name)
				require.NotEmpty(t, env["POWERCONTEXT_AUTH_TOKEN"], "%s: a non-loopback listen address needs a token", name)
				require.Equal(t, []any{"server", "run"}, svc["command"])
				require.Equal(t, []any{"CMD", "/usr/local/bin/powercontext", "server", "health"}, m(svc["healthcheck"])["test"])
				require.Equal(t, "service_completed_successfully", m(m(svc["depends_on"])["migrate"])["condition"])
				replicas[name] = m(svc["deploy"])["replicas"].(int)
			}
			require.Equal(t, map[string]int{"api": 2, "scheduler": 1, "worker": 2}, replicas)

			// Every ${VAR} the file needs is in env.example.
			b, err := os.ReadFile(c.file)
			require.NoError(t, err)
			example, err := os.ReadFile("compose/env.example")
			require.NoError(t, err)
			for _, v := range composeVarRE.FindAllStringSubmatch(string(b), -1) {
				require.Contains(t, string(example), v[1]+"=", "%s uses ${%s}: add it to compose/env.example", c.file, v[1])
			}
		})
	}
}

// manifests returns the Kubernetes objects of the kustomization: rendered by kubectl when required or present,
// else read from the files it lists (so a laptop without kubectl still checks the variables).
func manifests(t *testing.T, render bool) []map[string]any {
	t.Helper()
	var data []byte
	if render {
		kubectl := tool(t, "kubectl")
		cmd := exec.Command(kubectl, "kustomize", "kubernetes")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "kubectl kustomize deploy/kubernetes: %s", stderr.String())
		data = out
	} else {
		kust := readYAML(t, "kubernetes/kustomization.yaml")
		for _, r := range list(kust["resources"]) {
			b, err := os.ReadFile(filepath.Join("kubernetes", r.(string)))
			require.NoError(t, err)
			data = append(append(data, b...), []byte("\n---\n")...)
		}
	}
	var objs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var o map[string]any
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if o != nil {
			objs = append(objs, o)
		}
	}
	require.NotEmpty(t, objs)
	return objs
}

func podSpec(o map[string]any) map[string]any { return m(m(m(o["spec"])["template"])["spec"]) }

// TestKubernetesManifestsOnlyNameKnownVariables reads the manifest files themselves (no kubectl needed).
func TestKubernetesManifestsOnlyNameKnownVariables(t *testing.T) {
	kust := readYAML(t, "kubernetes/kustomization.yaml")
	for _, g := range list(kust["configMapGenerator"]) {
		for _, lit := range list(m(g)["literals"]) {
			k, _, _ := strings.Cut(lit.(string), "=")
			require.True(t, known(k), "configMapGenerator sets %s, which the binary does not read", k)
		}
	}
	for _, o := range manifests(t, false) {
		for _, c := range list(podSpec(o)["containers"]) {
			for _, e := range list(m(c)["env"]) {
				name := m(e)["name"].(string)
				require.True(t, known(name), "%s %s sets %s, which the binary does not read", o["kind"], m(o["metadata"])["name"], name)
			}
		}
	}
}

// TestKubernetesKustomizationRenders renders with kubectl and checks the pieces an operator relies on.
func TestKubernetesKustomizationRenders(t *testing.T) {
	objs := manifests(t, true)
	byKind := map[string][]map[string]any{}
	for _, o := range objs {
		byKind[o["kind"].(string)] = append(byKind[o["kind"].(string)], o)
	}
	var configMapKeys []string
	for _, cm := range byKind["ConfigMap"] {
		for k := range m(cm["data"]) {
			configMapKeys = append(configMapKeys, k)
		}
	}
	for _, k := range configMapKeys {
		require.True(t, known(k), "ConfigMap key %s is not a variable the binary reads", k)
	}
	roles := map[string]bool{}
	for _, d := range byKind["Deployment"] {
		name := m(d["metadata"])["name"].(string)
		spec := podSpec(d)
		require.Equal(t, "powercontext", spec["serviceAccountName"], name)
		require.Equal(t, true, m(spec["securityContext"])["runAsNonRoot"], name)
		containers := list(spec["containers"])
		require.Len(t, containers, 1, name)
		c := m(containers[0])
		require.Equal(t, []any{"server", "run"}, c["args"], name)
		require.Equal(t, "/health/live", m(m(c["livenessProbe"])["httpGet"])["path"], name)
		require.Equal(t, "/health/ready", m(m(c["readinessProbe"])["httpGet"])["path"], name)
		req := m(m(c["resources"])["requests"])
		require.NotEmpty(t, req["cpu"], name)
		require.NotEmpty(t, req["memory"], name)
		secrets := secretRefs(c)
		require.Equal(t, "database-url", secrets["POWERCONTEXT_DATABASE_URL"], "%s: the database URL comes from the Secret", name)
		require.Equal(t, "auth-token", secrets["POWERCONTEXT_AUTH_TOKEN"], "%s: the token comes from the Secret", name)
		for _, e := range list(c["env"]) {
			if m(e)["name"] == "POWERCONTEXT_DEPLOYMENT_ROLE" {
				roles[m(e)["value"].(string)] = true
				require.Equal(t, "powercontext-"+m(e)["value"].(string), name)
			}
		}
		require.NotEmpty(t, list(c["envFrom"]), "%s reads the shared ConfigMap", name)
	}
	require.Equal(t, map[string]bool{"api": true, "scheduler": true, "worker": true}, roles)

	require.Len(t, byKind["Job"], 1)
	require.Equal(t, "powercontext-migrate-dev", m(byKind["Job"][0]["metadata"])["name"], "the Job is named after the image tag")
	job := m(list(podSpec(byKind["Job"][0])["containers"])[0])
	require.Equal(t, []any{"server", "migrate"}, job["args"])
	require.Equal(t, "migrate-database-url", secretRefs(job)["POWERCONTEXT_DATABASE_URL"], "the Job uses the migration account")

	require.NotEmpty(t, byKind["Service"])
	require.NotEmpty(t, byKind["PodDisruptionBudget"])
	require.Empty(t, byKind["Secret"], "secrets are created by the operator, never rendered from the repository")
}

// TestKubernetesMigrateJobNamedPerVersion renders the overlay of docs/deployment.md#upgrading-on-kubernetes for two
// versions (one pinned by digest): each gets its own migration Job, named after its tag, so applying a new version
// creates a Job instead of trying to change the immutable pod template of the previous one.
func TestKubernetesMigrateJobNamedPerVersion(t *testing.T) {
	kubectl := tool(t, "kubectl")
	doc, err := os.ReadFile("../docs/deployment.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "### Upgrading on Kubernetes")
	require.True(t, ok, "docs/deployment.md has the section")
	_, block, ok := strings.Cut(section, "```yaml\n")
	require.True(t, ok)
	overlay, _, ok := strings.Cut(block, "```")
	require.True(t, ok)
	require.Contains(t, overlay, "../../deploy/kubernetes")

	base, err := filepath.Abs("kubernetes")
	require.NoError(t, err)
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, c := range []struct{ tag, digest string }{{"v1.3.0", ""}, {"v1.4.0-rc.1", digest}} {
		dir := t.TempDir()
		rel, err := filepath.Rel(dir, base) // kustomize refuses an absolute resource path
		require.NoError(t, err)
		o := strings.Replace(overlay, "../../deploy/kubernetes", filepath.ToSlash(rel), 1)
		o = strings.Replace(o, "newTag: v1.3.0", "newTag: "+c.tag, 1)
		if c.digest != "" {
			o = strings.Replace(o, "# digest: sha256:…", "digest: "+c.digest+" #", 1)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(o), 0o600))
		var stderr bytes.Buffer
		cmd := exec.Command(kubectl, "kustomize", dir)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "kubectl kustomize the documented overlay: %s", stderr.String())
		var jobs, images []string
		dec := yaml.NewDecoder(bytes.NewReader(out))
		for {
			var o map[string]any
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else {
				require.NoError(t, err)
			}
			if o["kind"] == "Job" {
				jobs = append(jobs, m(o["metadata"])["name"].(string))
			}
			for _, ct := range list(podSpec(o)["containers"]) {
				images = append(images, m(ct)["image"].(string))
			}
		}
		require.Equal(t, []string{"powercontext-migrate-" + c.tag}, jobs)
		want := "registry.example.com/powercontext:" + c.tag
		if c.digest != "" {
			want += "@" + c.digest
		}
		require.NotEmpty(t, images)
		for _, img := range images {
			require.Equal(t, want, img, "every role and the Job run the new image")
		}
	}
}

// TestDeployExamplesHoldRefusedPlaceholders: the token the compose env.example and the Kubernetes Secret example
// ship is refused at start, so a copied example never guards a server.
func TestDeployExamplesHoldRefusedPlaceholders(t *testing.T) {
	env, err := os.ReadFile("compose/env.example")
	require.NoError(t, err)
	secret := readYAML(t, "kubernetes/secret.example.yaml")
	var tokens []string
	for _, line := range strings.Split(string(env), "\n") {
		if v, ok := strings.CutPrefix(line, "POWERCONTEXT_AUTH_TOKEN="); ok {
			tokens = append(tokens, v)
		}
	}
	tokens = append(tokens, toString(m(secret["stringData"])["auth-token"]))
	require.Len(t, tokens, 2)
	for _, tok := range tokens {
		require.True(t, auth.IsPlaceholderToken(tok), "%q is a placeholder", tok)
		cfg := app.DefaultConfig()
		cfg.AuthToken = tok
		_, err := cfg.Principals()
		require.ErrorContains(t, err, "placeholder from the deploy examples")
	}
}

// TestDockerfilePinsBaseImagesByDigest: every base image (a FROM that is not an earlier stage) takes its digest from
// a build argument declared before the first FROM, in the form that drops the digest when the argument is empty;
// a default, when written, is a sha256 digest; `make image` passes each argument through.
func TestDockerfilePinsBaseImagesByDigest(t *testing.T) {
	dockerfile, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	makefile, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	args := map[string]string{} // global ARGs (before the first FROM) and their defaults
	stages := map[string]bool{}
	pinned := regexp.MustCompile(`^FROM \S+\$\{([A-Z_]+_DIGEST):\+@\$\{([A-Z_]+_DIGEST)\}\}( AS (\S+))?$`)
	froms := 0
	for _, line := range strings.Split(string(dockerfile), "\n") {
		line = strings.TrimSpace(line)
		if a, ok := strings.CutPrefix(line, "ARG "); ok && froms == 0 {
			name, def, _ := strings.Cut(a, "=")
			args[name] = def
		}
		from, ok := strings.CutPrefix(line, "FROM ")
		if !ok {
			continue
		}
		froms++
		if image, _, _ := strings.Cut(from, " "); stages[image] {
			continue
		}
		mt := pinned.FindStringSubmatch(line)
		require.NotNil(t, mt, "base image without a digest argument: %s", line)
		require.Equal(t, mt[1], mt[2], line)
		def, declared := args[mt[1]]
		require.True(t, declared, "%s is declared with ARG before the first FROM", mt[1])
		if def != "" {
			require.Regexp(t, `^sha256:[0-9a-f]{64}$`, def, "the default of %s", mt[1])
		}
		require.Contains(t, string(makefile), mt[1], "make image passes %s", mt[1])
		if mt[4] != "" {
			stages[mt[4]] = true
		}
	}
	require.Equal(t, 2, froms)
}

// secretRefs maps each env variable taken from a Secret to its key.
func secretRefs(container map[string]any) map[string]string {
	out := map[string]string{}
	for _, e := range list(container["env"]) {
		if ref := m(m(m(e)["valueFrom"])["secretKeyRef"]); ref != nil {
			out[m(e)["name"].(string)] = ref["key"].(string)
		}
	}
	return out
}

// TestImageIsBuiltTheWayCIBuilds: the Dockerfile's build stage runs `make build` (static, stamped), the Makefile's
// check (what CI runs) depends on that target, and the final image runs as a non-root user.
func TestImageIsBuiltTheWayCIBuilds(t *testing.T) {
	dockerfile, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	makefile, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	var runs []string
	var user, lastFrom string
	sc := bufio.NewScanner(bytes.NewReader(dockerfile))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		for strings.HasSuffix(line, "\\") && sc.Scan() { // an instruction continued on the next line
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(sc.Text())
		}
		switch {
		case strings.HasPrefix(line, "FROM "):
			lastFrom, user = line, ""
		case strings.HasPrefix(line, "RUN "):
			runs = append(runs, line)
		case strings.HasPrefix(line, "USER "):
			user = strings.TrimPrefix(line, "USER ")
		}
	}
	require.True(t, slices.ContainsFunc(runs, func(r string) bool { return strings.Contains(r, "make build") }),
		"the Dockerfile builds with `make build`")
	require.NotEmpty(t, user, "the final stage (%s) sets USER", lastFrom)
	require.NotRegexp(t, `^(0|root)(:|$)`, user)

	targets := map[string]string{}
	for _, line := range strings.Split(string(makefile), "\n") {
		if name, deps, ok := strings.Cut(line, ":"); ok && regexp.MustCompile(`^[a-z-]+$`).MatchString(name) &&
			!strings.HasPrefix(deps, "=") {
			deps, _, _ = strings.Cut(deps, "##")
			targets[name] = deps
		}
	}
	var reaches func(target, want string, depth int) bool
	reaches = func(target, want string, depth int) bool {
		if target == want {
			return true
		}
		for _, d := range strings.Fields(targets[target]) {
			if depth < 5 && reaches(d, want, depth+1) {
				return true
			}
		}
		return false
	}
	require.True(t, reaches("check", "build", 0), "make check (CI) builds with the image's target")
	require.Regexp(t, `(?m)^build:.*\n\tCGO_ENABLED=0 \$\(GO\) build -trimpath -ldflags "\$\(LDFLAGS\)"`, string(makefile))
}
