// helm-render: the few parts of Helm that tests/deploy.sh needs, as Debian
// 12 packages no Helm. It renders a chart's templates (Go text/template with
// Helm's names for the functions this project's chart uses: include,
// toYaml, indent, nindent, quote, default) over its values.yaml and --set
// values; compares two files as YAML documents (not as text); and turns a
// DaemonSet's pod template into a Pod, for podman kube play.
//
//	helm-render [--name N] [--namespace NS] [--set a.b=v]... CHART
//	helm-render --same A B      exit 0 if both hold the same documents
//	helm-render --pod FILE      the DaemonSet's pod template as a Pod (JSON)
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "helm-render: "+format+"\n", args...)
	os.Exit(2)
}

// documents: every non-empty YAML document of a file
func documents(path string) []interface{} {
	f, err := os.Open(path)
	if err != nil {
		fail("%v", err)
	}
	defer f.Close()
	var docs []interface{}
	dec := yaml.NewDecoder(f)
	for {
		var d interface{}
		err := dec.Decode(&d)
		if err == io.EOF {
			return docs
		}
		if err != nil {
			fail("%s: %v", path, err)
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
}

// difference: where a and b first differ, or "" where they are the same
func difference(path string, a, b interface{}) string {
	switch x := a.(type) {
	case map[string]interface{}:
		y, ok := b.(map[string]interface{})
		if !ok {
			return fmt.Sprintf("%s: a map against %v", path, b)
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			va, ina := x[k]
			vb, inb := y[k]
			if ina != inb {
				return fmt.Sprintf("%s.%s: only in the %s", path, k, map[bool]string{true: "first", false: "second"}[ina])
			}
			if d := difference(path+"."+k, va, vb); d != "" {
				return d
			}
		}
		return ""
	case []interface{}:
		y, ok := b.([]interface{})
		if !ok {
			return fmt.Sprintf("%s: a list against %v", path, b)
		}
		if len(x) != len(y) {
			return fmt.Sprintf("%s: %d items against %d", path, len(x), len(y))
		}
		for i := range x {
			if d := difference(fmt.Sprintf("%s[%d]", path, i), x[i], y[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Sprintf("%s: %#v against %#v", path, a, b)
	}
	return ""
}

func same(a, b string) {
	da, db := documents(a), documents(b)
	if len(da) != len(db) {
		fmt.Printf("%d documents against %d\n", len(da), len(db))
		os.Exit(1)
	}
	for i := range da {
		if d := difference(fmt.Sprintf("document %d", i+1), da[i], db[i]); d != "" {
			fmt.Println(d)
			os.Exit(1)
		}
	}
}

func field(m interface{}, keys ...string) interface{} {
	for _, k := range keys {
		mm, ok := m.(map[string]interface{})
		if !ok {
			return nil
		}
		m = mm[k]
	}
	return m
}

func pod(path string) {
	for _, d := range documents(path) {
		if field(d, "kind") != "DaemonSet" {
			continue
		}
		p := map[string]interface{}{
			"apiVersion": "v1",
			"kind":       "Pod",
			"metadata": map[string]interface{}{
				"name":        field(d, "metadata", "name"),
				"labels":      field(d, "spec", "template", "metadata", "labels"),
				"annotations": field(d, "spec", "template", "metadata", "annotations"),
			},
			"spec": field(d, "spec", "template", "spec"),
		}
		out, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			fail("%v", err)
		}
		fmt.Println(string(out))
		return
	}
	fail("%s: no DaemonSet", path)
}

func toYaml(v interface{}) string {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		fail("toYaml: %v", err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

func empty(v interface{}) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Array:
		return r.Len() == 0
	case reflect.Bool:
		return !r.Bool()
	case reflect.Int, reflect.Int64, reflect.Int32:
		return r.Int() == 0
	case reflect.Float64:
		return r.Float() == 0
	}
	return false
}

// set: a --set a.b=v into the values, v a bool, an integer or a string
func set(values map[string]interface{}, arg string) {
	eq := strings.IndexByte(arg, '=')
	if eq < 1 {
		fail("--set %s: not KEY=VALUE", arg)
	}
	keys := strings.Split(arg[:eq], ".")
	var v interface{} = arg[eq+1:]
	if b, err := strconv.ParseBool(arg[eq+1:]); err == nil {
		v = b
	} else if i, err := strconv.ParseInt(arg[eq+1:], 10, 64); err == nil {
		v = int(i)
	}
	m := values
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]interface{})
		if !ok {
			next = map[string]interface{}{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
}

func render(chart, name, namespace string, sets []string) {
	var meta map[string]interface{}
	var values map[string]interface{}
	for file, dest := range map[string]*map[string]interface{}{"Chart.yaml": &meta, "values.yaml": &values} {
		b, err := os.ReadFile(filepath.Join(chart, file))
		if err != nil {
			fail("%v", err)
		}
		if err := yaml.Unmarshal(b, dest); err != nil {
			fail("%s: %v", file, err)
		}
	}
	if values == nil {
		values = map[string]interface{}{}
	}
	for _, s := range sets {
		set(values, s)
	}
	data := map[string]interface{}{
		"Values":  values,
		"Release": map[string]interface{}{"Name": name, "Namespace": namespace, "Service": "Helm"},
		"Chart": map[string]interface{}{"Name": meta["name"], "Version": meta["version"],
			"AppVersion": meta["appVersion"]},
	}
	root := template.New("chart").Option("missingkey=error")
	root.Funcs(template.FuncMap{
		"include": func(name string, data interface{}) (string, error) {
			var b bytes.Buffer
			err := root.ExecuteTemplate(&b, name, data)
			return b.String(), err
		},
		"toYaml":  toYaml,
		"indent":  indent,
		"nindent": func(n int, s string) string { return "\n" + indent(n, s) },
		"quote": func(v interface{}) string {
			return strconv.Quote(fmt.Sprint(v))
		},
		"default": func(d interface{}, v ...interface{}) interface{} {
			if len(v) == 0 || empty(v[0]) {
				return d
			}
			return v[0]
		},
	})
	files, _ := filepath.Glob(filepath.Join(chart, "templates", "*"))
	sort.Strings(files)
	var rendered []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fail("%v", err)
		}
		if _, err := root.New(filepath.Base(f)).Parse(string(b)); err != nil {
			fail("%v", err)
		}
	}
	// as Helm: files starting with _ only define; the others are rendered
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasPrefix(base, "_") {
			continue
		}
		var b bytes.Buffer
		if err := root.ExecuteTemplate(&b, base, data); err != nil {
			fail("%v", err)
		}
		if s := strings.TrimSpace(b.String()); s != "" {
			rendered = append(rendered, "# Source: "+base+"\n"+s+"\n")
		}
	}
	fmt.Print(strings.Join(rendered, "---\n"))
}

func main() {
	args := os.Args[1:]
	name, namespace := "gpumemtrace", "gpumemtrace"
	var sets []string
	for len(args) > 1 {
		switch args[0] {
		case "--same":
			if len(args) != 3 {
				fail("--same A B")
			}
			same(args[1], args[2])
			return
		case "--pod":
			pod(args[1])
			return
		case "--name":
			name = args[1]
		case "--namespace":
			namespace = args[1]
		case "--set":
			sets = append(sets, args[1])
		default:
			fail("unknown option %s", args[0])
		}
		args = args[2:]
	}
	if len(args) != 1 {
		fail("usage: helm-render [--name N] [--namespace NS] [--set K=V]... CHART | --same A B | --pod FILE")
	}
	render(args[0], name, namespace, sets)
}
