package main

import (
	"encoding/json"
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
