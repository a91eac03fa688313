package main

import (
	"encoding/json"
	"os"
	"testing"
)

func TestBundleOf(t *testing.T) {
	cases := []struct {
		args   []string
		bundle string
		ok     bool
	}{
		{[]string{"--root", "/run/x", "--log", "/l", "create", "--bundle", "/b", "id"}, "/b", true},
		{[]string{"--root", "create", "run", "-b", "/c", "id"}, "/c", true},
		{[]string{"create", "--bundle=/d", "id"}, "/d", true},
		{[]string{"--root", "/run/x", "start", "id"}, "", false},
		{[]string{"--root", "/run/x", "delete", "--bundle", "/e", "id"}, "", false},
	}
	for _, c := range cases {
		b, ok := bundleOf(c.args)
		if ok != c.ok || (ok && b != c.bundle) {
			t.Errorf("bundleOf(%v) = %q, %v; want %q, %v", c.args, b, ok, c.bundle, c.ok)
		}
	}
}

func TestProcessFileOf(t *testing.T) {
	cases := []struct {
		args []string
		file string
		ok   bool
	}{
		{[]string{"--root", "/run/x", "--log", "/l", "exec", "--process", "/tmp/p.json", "--detach", "id"}, "/tmp/p.json", true},
		{[]string{"exec", "-p=/tmp/q.json", "id"}, "/tmp/q.json", true},
		{[]string{"exec", "id", "sh"}, "", false},
		{[]string{"create", "--bundle", "/b", "id"}, "", false},
	}
	for _, c := range cases {
		f, ok := processFileOf(c.args)
		if ok != c.ok || (ok && f != c.file) {
			t.Errorf("processFileOf(%v) = %q, %v; want %q, %v", c.args, f, ok, c.file, c.ok)
		}
	}
}

func TestFixProcessFile(t *testing.T) {
	p := t.TempDir() + "/process.json"
	if err := os.WriteFile(p, []byte(`{"args":["sh"],"capabilities":{"bounding":["CAP_SYS_RESOURCE","CAP_KILL"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fixFile(p, fixProcessSpec); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(p)
	if want := `{"args":["sh"],"capabilities":{"bounding":["CAP_KILL"]}}`; string(raw) != want {
		t.Fatalf("got %s, want %s", raw, want)
	}
}

func TestFixSpec(t *testing.T) {
	var spec map[string]any
	in := `{"process":{"oomScoreAdj":-998,"capabilities":{"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE"],"effective":["CAP_SYS_RESOURCE"]}}}`
	if err := json.Unmarshal([]byte(in), &spec); err != nil {
		t.Fatal(err)
	}
	if !fixSpec(spec) {
		t.Fatal("fixSpec reported no change")
	}
	out, _ := json.Marshal(spec)
	want := `{"process":{"capabilities":{"bounding":["CAP_CHOWN"],"effective":[]}}}`
	if string(out) != want {
		t.Fatalf("got %s, want %s", out, want)
	}
	// a positive oomScoreAdj and a spec without the capability stay as they are
	_ = json.Unmarshal([]byte(`{"process":{"oomScoreAdj":100,"capabilities":{"bounding":["CAP_CHOWN"]}}}`), &spec)
	if fixSpec(spec) {
		t.Fatal("fixSpec changed a spec that needs no change")
	}
}
