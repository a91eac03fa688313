// CoreDNS with the plugins of kubeadm's default Corefile (errors, health,
// ready, kubernetes, prometheus, forward, cache, loop, reload, loadbalance)
// plus log: the cluster DNS of the kind node image (tools/kind/build.sh).
// A CoreDNS build registers plugins by importing their packages
// (github.com/coredns/coredns core/plugin/zplugin.go imports all of them;
// this imports only what the Corefile needs, so the build stays small).
package main

import (
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
)

func main() {
	_ = dnsserver.Directives // the server type, registered by importing core/dnsserver
	coremain.Run()
}
