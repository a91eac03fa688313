// pause: the pod sandbox process (the image kubelet and containerd call the
// "sandbox image"). It holds the pod's namespaces open, reaps zombies (it is
// PID 1 when the pod shares its PID namespace) and exits on SIGINT/SIGTERM,
// as Kubernetes' build/pause/linux/pause.c does; written in Go so that it
// builds from the module proxy alone.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-v" || os.Args[1] == "--version") {
		fmt.Println("pause (hcs-testbed, Go)")
		return
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
