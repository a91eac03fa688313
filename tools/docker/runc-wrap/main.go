// runc-wrap: an OCI runtime that edits the bundle's config.json, then execs
// the real runc. Used where the machine's capability bounding set lacks
// CAP_SYS_RESOURCE (a VM that dropped it): runc then fails with "unable to
// apply caps: operation not permitted" for any spec that asks for it (every
// `docker run --privileged`), and with "can't get final child's PID from
// pipe: EOF" for a negative oomScoreAdj (lowering it needs CAP_SYS_RESOURCE;
// the kubelet gives pod sandboxes -998).
//
// What it changes, only when CAP_SYS_RESOURCE is missing from its own
// bounding set (elsewhere it execs runc with the arguments untouched):
//   - CAP_SYS_RESOURCE removed from every capability set of process.capabilities;
//   - a negative process.oomScoreAdj removed (the process keeps its parent's).
//
// The real runc: $RUNC_WRAP_REAL, else /usr/sbin/runc, else /usr/bin/runc.
// Every argument is passed on unchanged. What is edited: the bundle's
// config.json for `create` and `run` (--bundle/-b, default the working
// directory, as runc does), and the process file of `exec --process/-p`
// (what `docker exec` and the kubelet's exec probes send: a process object
// with the same capabilities and oomScoreAdj fields).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

const capSysResource = 24 // linux/capability.h

func main() {
	args := os.Args[1:]
	real := realRunc()
	if !hasBoundingCap(capSysResource) {
		if bundle, ok := bundleOf(args); ok {
			if err := fixFile(bundle+"/config.json", fixSpec); err != nil {
				fmt.Fprintf(os.Stderr, "runc-wrap: %v\n", err)
				os.Exit(1)
			}
		}
		if proc, ok := processFileOf(args); ok {
			if err := fixFile(proc, fixProcessSpec); err != nil {
				fmt.Fprintf(os.Stderr, "runc-wrap: %v\n", err)
				os.Exit(1)
			}
		}
	}
	err := syscall.Exec(real, append([]string{real}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "runc-wrap: exec %s: %v\n", real, err)
	os.Exit(127)
}

func realRunc() string {
	if p := os.Getenv("RUNC_WRAP_REAL"); p != "" {
		return p
	}
	for _, p := range []string{"/usr/sbin/runc", "/usr/bin/runc"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return "runc"
}

// hasBoundingCap reads CapBnd of /proc/self/status.
func hasBoundingCap(bit uint) bool {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return true // cannot tell: change nothing
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return true
			}
			return n&(1<<bit) != 0
		}
	}
	return true
}

// command returns the index of runc's command in args (after the global
// flags; those taking a value are listed so that their value is not taken
// for the command), or len(args).
func command(args []string) int {
	globalsWithValue := map[string]bool{"--root": true, "--log": true, "--log-format": true, "--criu": true, "--rootless": true}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			break
		}
		if globalsWithValue[a] {
			i++
		}
	}
	return i
}

// flagValue finds --long/-short VALUE or --long=VALUE/-short=VALUE after the command.
func flagValue(args []string, from int, long, short string) (string, bool) {
	for j := from; j < len(args); j++ {
		a := args[j]
		switch {
		case a == long || a == short:
			if j+1 < len(args) {
				return args[j+1], true
			}
		case strings.HasPrefix(a, long+"="):
			return strings.TrimPrefix(a, long+"="), true
		case strings.HasPrefix(a, short+"="):
			return strings.TrimPrefix(a, short+"="), true
		}
	}
	return "", false
}

// bundleOf finds the bundle directory of a `create` or `run` command line.
func bundleOf(args []string) (string, bool) {
	i := command(args)
	if i >= len(args) || (args[i] != "create" && args[i] != "run") {
		return "", false
	}
	if b, ok := flagValue(args, i+1, "--bundle", "-b"); ok {
		return b, true
	}
	wd, err := os.Getwd()
	return wd, err == nil
}

// processFileOf finds the process file of an `exec --process FILE` command line.
func processFileOf(args []string) (string, bool) {
	i := command(args)
	if i >= len(args) || args[i] != "exec" {
		return "", false
	}
	return flagValue(args, i+1, "--process", "-p")
}

func fixFile(path string, fix func(map[string]any) bool) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !fix(spec) {
		return nil
	}
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, st.Mode().Perm())
}

// fixSpec edits an OCI runtime spec in place; it reports whether it changed anything.
func fixSpec(spec map[string]any) bool {
	proc, ok := spec["process"].(map[string]any)
	if !ok {
		return false
	}
	return fixProcessSpec(proc)
}

// fixProcessSpec edits an OCI process object in place.
func fixProcessSpec(proc map[string]any) bool {
	changed := false
	if caps, ok := proc["capabilities"].(map[string]any); ok {
		for set, v := range caps {
			list, ok := v.([]any)
			if !ok {
				continue
			}
			kept := list[:0:0]
			for _, c := range list {
				if c == "CAP_SYS_RESOURCE" {
					changed = true
					continue
				}
				kept = append(kept, c)
			}
			caps[set] = kept
		}
	}
	if adj, ok := proc["oomScoreAdj"].(float64); ok && adj < 0 {
		delete(proc, "oomScoreAdj")
		changed = true
	}
	return changed
}
