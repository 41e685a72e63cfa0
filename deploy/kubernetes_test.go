package deploy

import (
	"bytes"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/yannh/kubeconform/pkg/resource"
	"github.com/yannh/kubeconform/pkg/validator"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// schemaLocation finds a kind's strict schema among the committed ones
// (kubernetes/schemas, written by its gen from Kubernetes 1.34's OpenAPI
// document): the validator never reaches the network.
const schemaLocation = "kubernetes/schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json"

func newValidator(t *testing.T) validator.Validator {
	t.Helper()
	v, err := validator.New([]string{schemaLocation}, validator.Opts{Strict: true, KubernetesVersion: "1.34.2"})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// kustomization reads kubernetes/kustomization.yaml's resources.
func kustomization(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("kubernetes/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	return k.Resources
}

// Every manifest the kustomization lists validates, strictly, against the
// Kubernetes schemas of its kind (none is skipped for want of a schema),
// and every manifest in the folder is listed.
func TestKubernetesManifestsValidate(t *testing.T) {
	v := newValidator(t)
	files := kustomization(t)
	listed := map[string]bool{}
	kinds := map[string]int{}
	for _, f := range files {
		listed[f] = true
		fh, err := os.Open(filepath.Join("kubernetes", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range v.Validate(f, fh) {
			sig, _ := r.Resource.Signature()
			if r.Status != validator.Valid {
				t.Errorf("%s: %v: status %d, err %v, %v", f, sig, r.Status, r.Err, r.ValidationErrors)
				continue
			}
			kinds[sig.Kind]++
		}
	}
	for _, k := range []string{"Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "ServiceAccount"} {
		if kinds[k] != 1 {
			t.Errorf("%d %s manifests, want 1", kinds[k], k)
		}
	}
	all, _ := filepath.Glob("kubernetes/*.yaml")
	for _, f := range all {
		if b := filepath.Base(f); b != "kustomization.yaml" && !listed[b] {
			t.Errorf("%s is not listed in kustomization.yaml", f)
		}
	}
}

// The validator catches what a strict API server refuses: a misspelled
// field, a wrong type, a missing required field (so the test above cannot
// pass by skipping).
func TestKubernetesValidatorCatches(t *testing.T) {
	v := newValidator(t)
	base, err := os.ReadFile("kubernetes/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, from, to string }{
		{"misspelled field", "  replicas: 2", "  replica: 2"},
		{"wrong type", "  revisionHistoryLimit: 5", "  revisionHistoryLimit: five"},
		{"missing required", "      containers:\n        - name: pregao\n", "      containers:\n        - nam: pregao\n"},
		{"a list for a number", "            periodSeconds: 10\n", "            periodSeconds: [10]\n"},
	} {
		y := strings.Replace(string(base), c.from, c.to, 1)
		if y == string(base) {
			t.Fatalf("%s: %q not in deployment.yaml", c.name, c.from)
		}
		rs := v.Validate(c.name, io.NopCloser(bytes.NewReader([]byte(y))))
		if len(rs) != 1 || rs[0].Status != validator.Invalid {
			t.Errorf("%s: %+v, want Invalid", c.name, rs)
		}
	}
	if r := v.ValidateResource(resource.Resource{Path: "x", Bytes: []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  ports:\n    - port: http\n")}); r.Status != validator.Invalid {
		t.Errorf("a Service port given a name: status %d", r.Status)
	}
}

// manifest is the part of the manifests the consistency checks read.
type manifest struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec map[string]any `json:"spec"`
}

func readManifest(t *testing.T, file string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("kubernetes", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}

// The manifests agree with each other and with the server: probes on
// /readyz and /healthz at the container's port, the Service, budget and
// autoscaler aimed at the Deployment's pods, a grace period that covers
// the drain and the shutdown, memory for two datasets.
func TestKubernetesManifestsConsistent(t *testing.T) {
	var dep struct {
		Metadata struct{ Name string } `json:"metadata"`
		Spec     struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			Template struct {
				Metadata struct {
					Labels      map[string]string `json:"labels"`
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
				Spec struct {
					TerminationGracePeriodSeconds int `json:"terminationGracePeriodSeconds"`
					Containers                    []struct {
						Ports []struct {
							Name          string `json:"name"`
							ContainerPort int    `json:"containerPort"`
						} `json:"ports"`
						Env []struct {
							Name  string `json:"name"`
							Value string `json:"value"`
						} `json:"env"`
						StartupProbe, ReadinessProbe, LivenessProbe struct {
							HTTPGet struct {
								Path string `json:"path"`
								Port string `json:"port"`
							} `json:"httpGet"`
							PeriodSeconds    int `json:"periodSeconds"`
							FailureThreshold int `json:"failureThreshold"`
						}
						Resources struct {
							Requests, Limits map[string]string
						} `json:"resources"`
						SecurityContext struct {
							ReadOnlyRootFilesystem bool `json:"readOnlyRootFilesystem"`
						} `json:"securityContext"`
						VolumeMounts []struct {
							Name      string `json:"name"`
							MountPath string `json:"mountPath"`
						} `json:"volumeMounts"`
					} `json:"containers"`
					Volumes []struct {
						Name     string `json:"name"`
						EmptyDir *struct {
							SizeLimit string `json:"sizeLimit"`
						} `json:"emptyDir"`
					} `json:"volumes"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	readManifest(t, "deployment.yaml", &dep)
	sel := dep.Spec.Selector.MatchLabels
	for k, v := range sel {
		if dep.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("the pods lack the selector's label %s=%s", k, v)
		}
	}
	if len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(dep.Spec.Template.Spec.Containers))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if len(c.Ports) != 2 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 || c.Ports[1].Name != "metrics" || c.Ports[1].ContainerPort != 9090 {
		t.Errorf("ports %+v, want http 8080 and metrics 9090", c.Ports)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	// /metrics apart from the port the Service exposes, and scraped there.
	if env["PREGAO_METRICS_ADDR"] != ":9090" || dep.Spec.Template.Metadata.Annotations["prometheus.io/port"] != "9090" {
		t.Errorf("PREGAO_METRICS_ADDR %q, scrape port %q: want both 9090", env["PREGAO_METRICS_ADDR"], dep.Spec.Template.Metadata.Annotations["prometheus.io/port"])
	}
	if env["PREGAO_ADDR"] != ":8080" || !strings.HasPrefix(env["PREGAO_SNAPSHOT"], "s3://") || env["PREGAO_WATCH"] == "" {
		t.Errorf("env %v: want PREGAO_ADDR :8080, an s3:// PREGAO_SNAPSHOT, PREGAO_WATCH", env)
	}
	for name, p := range map[string]struct {
		path string
		got  string
		port string
	}{
		"startup":   {"/readyz", c.StartupProbe.HTTPGet.Path, c.StartupProbe.HTTPGet.Port},
		"readiness": {"/readyz", c.ReadinessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Port},
		"liveness":  {"/healthz", c.LivenessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Port},
	} {
		if p.got != p.path || p.port != "http" {
			t.Errorf("%s probe on %s port %s, want %s port http", name, p.got, p.port, p.path)
		}
	}
	if s := c.StartupProbe.PeriodSeconds * c.StartupProbe.FailureThreshold; s < 300 {
		t.Errorf("the startup probe gives a load %d s, want at least 300", s)
	}
	// The server's default shutdown timeout (35 s) plus the drain.
	drain := map[string]int{"": 0, "10s": 10}[env["PREGAO_DRAIN"]]
	if g := dep.Spec.Template.Spec.TerminationGracePeriodSeconds; g < drain+35 {
		t.Errorf("terminationGracePeriodSeconds %d < drain %d s + shutdown 35 s", g, drain)
	}
	if c.Resources.Requests["memory"] == "" || c.Resources.Requests["memory"] != c.Resources.Limits["memory"] {
		t.Errorf("memory request %q, limit %q: want equal", c.Resources.Requests["memory"], c.Resources.Limits["memory"])
	}

	// The flat files (GET /files) go to a writable volume: with a
	// read-only root the default folder (the user's cache) cannot be
	// written and every request would answer 503. Its size limit holds
	// the bound and one cut being built (356 MiB at demo scale 1): past
	// it the kubelet evicts the pod.
	if c.SecurityContext.ReadOnlyRootFilesystem {
		dir := env["PREGAO_FILES_DIR"]
		var vol string
		for _, m := range c.VolumeMounts {
			if dir == m.MountPath || strings.HasPrefix(dir, strings.TrimSuffix(m.MountPath, "/")+"/") {
				vol = m.Name
			}
		}
		limit := int64(-1)
		for _, v := range dep.Spec.Template.Spec.Volumes {
			if v.Name == vol && v.EmptyDir != nil {
				limit = quantity(t, v.EmptyDir.SizeLimit)
			}
		}
		bound, err := strconv.ParseInt(env["PREGAO_FILES_MAX_BYTES"], 10, 64)
		if vol == "" || err != nil || limit < bound+512<<20 {
			t.Errorf("PREGAO_FILES_DIR %q on volume %q of size limit %d, PREGAO_FILES_MAX_BYTES %q: want a folder of a mounted emptyDir holding the bound and 512 MiB more",
				dir, vol, limit, env["PREGAO_FILES_MAX_BYTES"])
		}
	}

	var svc, pdb, hpa manifest
	readManifest(t, "service.yaml", &svc)
	readManifest(t, "pdb.yaml", &pdb)
	readManifest(t, "hpa.yaml", &hpa)
	if !sameLabels(svc.Spec["selector"], sel) {
		t.Errorf("Service selector %v, Deployment's %v", svc.Spec["selector"], sel)
	}
	if m, _ := pdb.Spec["selector"].(map[string]any); !sameLabels(m["matchLabels"], sel) {
		t.Errorf("PodDisruptionBudget selector %v, Deployment's %v", pdb.Spec["selector"], sel)
	}
	if ref, _ := hpa.Spec["scaleTargetRef"].(map[string]any); ref["kind"] != "Deployment" || ref["name"] != dep.Metadata.Name {
		t.Errorf("HorizontalPodAutoscaler targets %v, want Deployment %s", ref, dep.Metadata.Name)
	}
	if ports, _ := svc.Spec["ports"].([]any); len(ports) != 1 || ports[0].(map[string]any)["targetPort"] != "http" {
		t.Errorf("Service ports %v: want one, targetPort http", svc.Spec["ports"])
	}
}

// quantity reads a Kubernetes quantity of bytes (3Gi, 512Mi, 1000);
// none is 0.
func quantity(t *testing.T, q string) int64 {
	t.Helper()
	if q == "" {
		return 0
	}
	mult := int64(1)
	for suffix, m := range map[string]int64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12} {
		if n, ok := strings.CutSuffix(q, suffix); ok {
			q, mult = n, m
			break
		}
	}
	n, err := strconv.ParseInt(q, 10, 64)
	if err != nil {
		t.Fatalf("quantity %q: %v", q, err)
	}
	return n * mult
}

func sameLabels(got any, want map[string]string) bool {
	m, _ := got.(map[string]any)
	if len(m) != len(want) {
		return false
	}
	for k, v := range want {
		if m[k] != v {
			return false
		}
	}
	return true
}

// The live overlay (kubernetes-live): the feed's Deployment validates
// strictly and runs one pregao feed at a time; the API replicas' patch
// names the base Deployment and its container, and the patched
// Deployment validates; both read the same live stream; the overlay
// lists every file of its folder.
func TestKubernetesLiveOverlay(t *testing.T) {
	v := newValidator(t)
	b, err := os.ReadFile("kubernetes-live/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
		Patches   []struct {
			Path string `json:"path"`
		} `json:"patches"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	if len(k.Resources) != 2 || k.Resources[0] != "../kubernetes" || k.Resources[1] != "feed.yaml" || len(k.Patches) != 1 || k.Patches[0].Path != "api-live.yaml" {
		t.Fatalf("live kustomization: resources %v, patches %v", k.Resources, k.Patches)
	}
	all, _ := filepath.Glob("kubernetes-live/*.yaml")
	if len(all) != 3 {
		t.Errorf("kubernetes-live holds %v: want kustomization.yaml, feed.yaml, api-live.yaml", all)
	}
	fh, err := os.Open("kubernetes-live/feed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range v.Validate("feed.yaml", fh) {
		if r.Status != validator.Valid {
			t.Errorf("feed.yaml: status %d, err %v, %v", r.Status, r.Err, r.ValidationErrors)
		}
	}
	type env struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	type deployment struct {
		Kind     string                `json:"kind"`
		Metadata struct{ Name string } `json:"metadata"`
		Spec     struct {
			Replicas *int `json:"replicas"`
			Strategy struct {
				Type string `json:"type"`
			} `json:"strategy"`
			Template struct {
				Spec struct {
					Containers []struct {
						Name    string   `json:"name"`
						Command []string `json:"command"`
						Env     []env    `json:"env"`
						Ports   []struct {
							Name          string `json:"name"`
							ContainerPort int    `json:"containerPort"`
						} `json:"ports"`
						ReadinessProbe, LivenessProbe struct {
							HTTPGet struct {
								Path string `json:"path"`
								Port string `json:"port"`
							} `json:"httpGet"`
						}
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	var feed, patch, base deployment
	readManifest(t, "../kubernetes-live/feed.yaml", &feed)
	readManifest(t, "../kubernetes-live/api-live.yaml", &patch)
	readManifest(t, "deployment.yaml", &base)
	envOf := func(d deployment) map[string]string {
		m := map[string]string{}
		if len(d.Spec.Template.Spec.Containers) == 1 {
			for _, e := range d.Spec.Template.Spec.Containers[0].Env {
				m[e.Name] = e.Value
			}
		}
		return m
	}
	fc := feed.Spec.Template.Spec.Containers
	if feed.Spec.Replicas == nil || *feed.Spec.Replicas != 1 || feed.Spec.Strategy.Type != "Recreate" || len(fc) != 1 ||
		len(fc[0].Command) != 2 || fc[0].Command[1] != "feed" {
		t.Errorf("the feed's Deployment: want 1 replica, Recreate, one container running pregao feed: %+v", feed.Spec)
	}
	fe, pe := envOf(feed), envOf(patch)
	// The feed's /metrics, /readyz and /healthz (pregao feed
	// --metrics-addr) on its one port, probed there.
	if len(fc) == 1 {
		c := fc[0]
		if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8080 || fe["PREGAO_METRICS_ADDR"] != ":8080" ||
			c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" ||
			c.ReadinessProbe.HTTPGet.Port != c.Ports[0].Name || c.LivenessProbe.HTTPGet.Port != c.Ports[0].Name {
			t.Errorf("the feed's port %+v, metrics on %q, probes %+v %+v", c.Ports, fe["PREGAO_METRICS_ADDR"], c.ReadinessProbe, c.LivenessProbe)
		}
	}
	if !strings.HasPrefix(fe["PREGAO_LIVE"], "nats://") || fe["PREGAO_LIVE"] != pe["PREGAO_LIVE"] || fe["PREGAO_LIVE_REPLICAS"] != "3" {
		t.Errorf("PREGAO_LIVE: feed %q (%s copies), API replicas %q: want the same nats:// cluster, 3 copies", fe["PREGAO_LIVE"], fe["PREGAO_LIVE_REPLICAS"], pe["PREGAO_LIVE"])
	}
	if patch.Kind != "Deployment" || patch.Metadata.Name != base.Metadata.Name || len(patch.Spec.Template.Spec.Containers) != 1 ||
		patch.Spec.Template.Spec.Containers[0].Name != base.Spec.Template.Spec.Containers[0].Name {
		t.Errorf("api-live.yaml patches %s %s, want the base's Deployment %s", patch.Kind, patch.Metadata.Name, base.Metadata.Name)
	}
	// The base with the patch's variables (what kustomize's strategic
	// merge of the env list gives) validates.
	raw, err := os.ReadFile("kubernetes/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	anchor := "          env:\n"
	add := ""
	for _, e := range patch.Spec.Template.Spec.Containers[0].Env {
		add += "            - name: " + e.Name + "\n              value: " + e.Value + "\n"
	}
	y := strings.Replace(string(raw), anchor, anchor+add, 1)
	if y == string(raw) {
		t.Fatal("deployment.yaml has no env list")
	}
	if rs := v.Validate("patched", io.NopCloser(strings.NewReader(y))); len(rs) != 1 || rs[0].Status != validator.Valid {
		t.Errorf("the patched Deployment: %+v", rs)
	}
}

// kubectl apply -k builds each kustomization as kustomize does: the base
// and the live overlay build (an overlay inside its base's folder is a
// cycle kustomize refuses), and every resource they render validates
// strictly; the overlay's API Deployment carries the patch's live stream.
func TestKustomizeBuilds(t *testing.T) {
	v := newValidator(t)
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	for _, dir := range []string{"kubernetes", "kubernetes-live"} {
		rm, err := k.Run(filesys.MakeFsOnDisk(), dir)
		if err != nil {
			t.Errorf("kustomize build %s: %v", dir, err)
			continue
		}
		out, err := rm.AsYaml()
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		for _, r := range v.Validate(dir, io.NopCloser(bytes.NewReader(out))) {
			if r.Status != validator.Valid {
				t.Errorf("%s: %v: status %d, err %v, %v", dir, r.Resource.Path, r.Status, r.Err, r.ValidationErrors)
			}
			if sig, err := r.Resource.Signature(); err == nil {
				kinds[sig.Kind]++
			}
		}
		want := map[string]int{"ServiceAccount": 1, "Deployment": 1, "Service": 1, "PodDisruptionBudget": 1, "HorizontalPodAutoscaler": 1}
		if dir == "kubernetes-live" {
			want["Deployment"] = 2
			if !bytes.Contains(out, []byte("name: PREGAO_LIVE\n")) || bytes.Count(out, []byte("name: PREGAO_LIVE\n")) != 2 {
				t.Errorf("%s: PREGAO_LIVE set %d times, want in the feed and the API replicas", dir, bytes.Count(out, []byte("name: PREGAO_LIVE\n")))
			}
		}
		if !maps.Equal(kinds, want) {
			t.Errorf("%s renders %v, want %v", dir, kinds, want)
		}
	}
}
