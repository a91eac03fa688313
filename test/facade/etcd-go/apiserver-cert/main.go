// Command apiserver-cert is test code: an outside client of the facade's
// pods/kube-apiserver-<node>/portforward (src/world/facade/portforward/apiserver-forward.ts),
// reading the serving certificate the way Cluster API's KCP v1.10 does in
// GetAPIServerCertificateExpiry (controlplane/kubeadm/internal/workload_cluster.go):
// the SPDY port-forward dial of controlplane/kubeadm/internal/proxy/dial.go
// (../pfdial), then crypto/tls without verification, then the peer
// certificate whose CN is kube-apiserver. Beyond what KCP does, it verifies
// that certificate against the cluster CA for a name, and with -get it sends
// an HTTP GET over the same TLS connection with the kubeconfig's bearer token.
//
//	apiserver-cert -kubeconfig F -pod kube-apiserver-<node> [-port 6443] [-ca CA -verify-name NAME] [-get /version]
//
// Prints one JSON object: subject, issuer, notBefore, notAfter (RFC 3339),
// dnsNames, ips, the number of peer certificates, verifyError (when -ca is
// given), and the status and body of the GET; or error {stage, message}.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"hcs-testbed/test/facade/etcd-go/pfdial"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the workload cluster")
	pod := flag.String("pod", "", "kube-apiserver pod, kube-apiserver-<node>")
	port := flag.Int("port", 6443, "the apiserver's bind port (KCP: calculateAPIServerPort, default 6443)")
	caFile := flag.String("ca", "", "cluster CA (PEM): verify the serving certificate against it")
	verifyName := flag.String("verify-name", "", "the name (DNS or IP) to verify the certificate for")
	get := flag.String("get", "", "a path to GET over the TLS connection after the handshake")
	flag.Parse()
	out := map[string]any{}
	fail := func(stage string, err error) {
		out["error"] = map[string]string{"stage": stage, "message": err.Error()}
		_ = json.NewEncoder(os.Stdout).Encode(out)
		os.Exit(1)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail("kubeconfig", err)
	}
	cfg.Timeout = 10 * time.Second
	raw, err := pfdial.Dial(cfg, *pod, *port)
	if err != nil {
		fail("dial", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// As KCP: no verification here, the certificate is only read.
	conn := tls.Client(raw, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test code reading the peer certificate, verified below
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		fail("handshake", fmt.Errorf("TLS handshake with the kube-apiserver failed: %w", err))
	}
	defer conn.Close()
	peers := conn.ConnectionState().PeerCertificates
	out["peerCertificates"] = len(peers)
	var leaf *x509.Certificate
	for _, c := range peers {
		if c.Subject.CommonName == "kube-apiserver" {
			leaf = c
		}
	}
	if leaf == nil {
		fail("certificate", fmt.Errorf("no peer certificate with cn=kube-apiserver"))
	}
	ips := []string{}
	for _, ip := range leaf.IPAddresses {
		ips = append(ips, ip.String())
	}
	out["subject"] = leaf.Subject.CommonName
	out["issuer"] = leaf.Issuer.CommonName
	out["notBefore"] = leaf.NotBefore.UTC().Format(time.RFC3339)
	out["notAfter"] = leaf.NotAfter.UTC().Format(time.RFC3339)
	out["dnsNames"] = leaf.DNSNames
	out["ips"] = ips
	if *caFile != "" {
		caPem, err := os.ReadFile(*caFile)
		if err != nil {
			fail("ca", err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPem)
		_, verr := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: *verifyName, CurrentTime: leaf.NotBefore.Add(time.Hour), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if verr != nil {
			out["verifyError"] = verr.Error()
		} else {
			out["verifyError"] = nil
		}
	}
	if *get != "" {
		req, _ := http.NewRequest("GET", "https://"+*pod+*get, nil)
		req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if err := req.Write(conn); err != nil {
			fail("get", err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), req)
		if err != nil {
			fail("get", err)
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		out["getStatus"] = res.StatusCode
		out["getBody"] = string(body)
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
