// Command gen writes the strict JSON schemas that the Kubernetes manifests
// of deploy/kubernetes are validated against (kubernetes_test.go), from the
// OpenAPI (v2) document of a Kubernetes release:
//
//	spec=$(go mod download -json k8s.io/kubernetes@v1.34.2 | jq -r .Dir)/api/openapi-spec/swagger.json
//	go run ./kubernetes/schemas/gen -spec "$spec" -release v1.34.2 -out kubernetes/schemas Deployment:apps/v1 Service:v1 ...
//
// (make k8s-schemas in deploy/). It writes _definitions.json, holding the
// definitions the kinds reach, and one file per kind named as the
// validator looks it up (deployment-apps-v1.json) that refers to it.
// Strict: an object with declared properties accepts no other property;
// descriptions are dropped; IntOrString and Quantity accept a string or a
// number as the API server does.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	spec := flag.String("spec", "", "the release's api/openapi-spec/swagger.json")
	out := flag.String("out", "kubernetes/schemas", "output folder")
	release := flag.String("release", "", "the Kubernetes release the document comes from (v1.34.2), for the record")
	flag.Parse()
	if err := run(*spec, *out, *release, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(specPath, out, release string, kinds []string) error {
	b, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	keep := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				name := strings.TrimPrefix(r, "#/definitions/")
				if !keep[name] {
					keep[name] = true
					walk(doc.Definitions[name])
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	files := map[string]string{} // file name → definition
	for _, k := range kinds {
		kind, gv, ok := strings.Cut(k, ":")
		if !ok {
			return fmt.Errorf("%q: want Kind:group/version or Kind:version", k)
		}
		group, version, ok := strings.Cut(gv, "/")
		if !ok {
			group, version = "", gv
		}
		name := ""
		for n, d := range doc.Definitions {
			for _, x := range asSlice(d["x-kubernetes-group-version-kind"]) {
				m, _ := x.(map[string]any)
				if m["kind"] == kind && m["group"] == group && m["version"] == version {
					name = n
				}
			}
		}
		if name == "" {
			return fmt.Errorf("%s: no definition", k)
		}
		keep[name] = true
		walk(doc.Definitions[name])
		suffix := "-" + strings.ToLower(strings.Split(strings.Split(gv, "/")[0], ".")[0])
		if group != "" {
			suffix += "-" + strings.ToLower(version)
		}
		files[strings.ToLower(kind)+suffix+".json"] = name
	}
	defs := map[string]any{}
	for n := range keep {
		defs[n] = strict(n, doc.Definitions[n])
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(out, "_definitions.json"), map[string]any{
		"description": fmt.Sprintf("Definitions of Kubernetes %s reached by the kinds of this folder, strict; written by gen from the release's OpenAPI document (api/openapi-spec/swagger.json).", release),
		"definitions": defs,
	}); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		if err := writeJSON(filepath.Join(out, f), map[string]any{"$ref": "_definitions.json#/definitions/" + files[f]}); err != nil {
			return err
		}
	}
	return nil
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// strict rewrites definition name's schema d: references into
// _definitions.json, no descriptions, no undeclared properties.
func strict(name string, d map[string]any) any {
	switch name {
	case "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
	case "io.k8s.apimachinery.pkg.api.resource.Quantity":
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}
	}
	return rewrite(d)
}

func rewrite(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, x := range v {
			switch {
			case k == "description" || strings.HasPrefix(k, "x-"):
				continue
			case k == "$ref":
				m[k] = "_definitions.json" + x.(string)
			case k == "properties":
				props := map[string]any{}
				for p, s := range x.(map[string]any) {
					props[p] = rewrite(s)
				}
				m[k] = props
			default:
				m[k] = rewrite(x)
			}
		}
		if _, ok := m["properties"]; ok {
			if _, ok := m["additionalProperties"]; !ok {
				m["additionalProperties"] = false
			}
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = rewrite(x)
		}
		return out
	}
	return v
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
