// Command etcd-go is test code: an outside client of the facade's
// pods/<pod>/portforward + etcd v3 endpoint (src/world/facade/portforward/etcd-forward.ts),
// built on the official clients, the way Cluster API's KCP v1.10 reaches etcd
// (controlplane/kubeadm/internal/proxy/dial.go: client-go transport/spdy,
// protocol portforward.k8s.io, an error stream then a data stream for port
// 2379; etcd_client_generator.go + etcd/etcd.go: go.etcd.io/etcd/client/v3
// over that connection with a client certificate of the etcd CA).
//
//	etcd-go -kubeconfig F -cert C -key K -ca CA -pod etcd-<node> [-move-leader NODE] [-remove NODE]
//
// The port-forward dial is in ./pfdial (shared with ./apiserver-cert).
//
// Prints one JSON object: status (leader, version, errors, header member),
// members (id, name), alarms, and the results of the optional calls.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"hcs-testbed/test/facade/etcd-go/pfdial"
)

func dialer(cfg *rest.Config, pod string) func(context.Context, string) (net.Conn, error) {
	return func(_ context.Context, _ string) (net.Conn, error) { return pfdial.Dial(cfg, pod, 2379) }
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the workload cluster")
	certFile := flag.String("cert", "", "client certificate (PEM)")
	keyFile := flag.String("key", "", "client key (PEM)")
	caFile := flag.String("ca", "", "etcd CA (PEM): the serving certificate is verified against it")
	pod := flag.String("pod", "", "etcd pod, etcd-<node>")
	moveLeader := flag.String("move-leader", "", "MoveLeader to the member of this node")
	remove := flag.String("remove", "", "MemberRemove the member of this node")
	dialTimeout := flag.Duration("dial-timeout", 10*time.Second, "etcd client DialTimeout (KCP: --etcd-dial-timeout-duration, 10s)")
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
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		fail("cert", err)
	}
	caPem, err := os.ReadFile(*caFile)
	if err != nil {
		fail("ca", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPem)
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{*pod},
		DialTimeout: *dialTimeout,
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(dialer(cfg, *pod)), grpc.WithBlock()},
		TLS:         &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: *pod, MinVersion: tls.VersionTLS12},
		Logger:      zap.NewNop(),
	})
	if err != nil {
		fail("connect", err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := cli.Status(ctx, *pod)
	if err != nil {
		fail("status", err)
	}
	out["status"] = map[string]any{"leader": strconv.FormatUint(st.Leader, 16), "version": st.Version, "errors": st.Errors, "member": strconv.FormatUint(st.Header.MemberId, 16), "cluster": strconv.FormatUint(st.Header.ClusterId, 16), "raftTerm": st.RaftTerm}
	list := func() (map[string]uint64, []map[string]any) {
		ml, err := cli.MemberList(ctx)
		if err != nil {
			fail("memberlist", err)
		}
		ids := map[string]uint64{}
		ms := []map[string]any{}
		for _, m := range ml.Members {
			ids[m.Name] = m.ID
			ms = append(ms, map[string]any{"id": strconv.FormatUint(m.ID, 16), "name": m.Name, "peerURLs": m.PeerURLs, "clientURLs": m.ClientURLs, "isLearner": m.IsLearner})
		}
		return ids, ms
	}
	ids, ms := list()
	out["members"] = ms
	al, err := cli.AlarmList(ctx)
	if err != nil {
		fail("alarms", err)
	}
	out["alarms"] = len(al.Alarms)
	if *moveLeader != "" {
		if _, err := cli.MoveLeader(ctx, ids[*moveLeader]); err != nil {
			fail("moveleader", err)
		}
		st2, err := cli.Status(ctx, *pod)
		if err != nil {
			fail("status-after-move", err)
		}
		out["leaderAfterMove"] = strconv.FormatUint(st2.Leader, 16)
	}
	if *remove != "" {
		id, ok := ids[*remove]
		if !ok {
			fail("remove", fmt.Errorf("no member named %s", *remove))
		}
		if _, err := cli.MemberRemove(ctx, id); err != nil {
			fail("memberremove", err)
		}
		_, after := list()
		out["membersAfterRemove"] = after
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
