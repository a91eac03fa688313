// Package pfdial is test code: a net.Conn to a pod's port through the
// apiserver's pods/<pod>/portforward, the way Cluster API's KCP v1.10 dials
// (controlplane/kubeadm/internal/proxy/dial.go: client-go transport/spdy,
// protocol portforward.k8s.io, an error stream then a data stream with the
// port and a request id). Shared by the etcd and the apiserver clients.
package pfdial

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

type streamConn struct {
	conn   httpstream.Connection
	stream httpstream.Stream
}

func (c *streamConn) Read(b []byte) (int, error)  { return c.stream.Read(b) }
func (c *streamConn) Write(b []byte) (int, error) { return c.stream.Write(b) }
func (c *streamConn) Close() error {
	_ = c.stream.Close()
	return c.conn.Close()
}
func (c *streamConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *streamConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *streamConn) SetDeadline(time.Time) error      { return nil }
func (c *streamConn) SetReadDeadline(time.Time) error  { return nil }
func (c *streamConn) SetWriteDeadline(time.Time) error { return nil }

// Dial opens a connection to port of kube-system/pod through the apiserver of cfg.
func Dial(cfg *rest.Config, pod string, port int) (net.Conn, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	rt, up, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, err
	}
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("kube-system").Name(pod).SubResource("portforward").URL()
	conn, _, err := spdy.NewDialer(up, &http.Client{Transport: rt}, "POST", u).Dial(portforward.PortForwardProtocolV1Name)
	if err != nil {
		return nil, fmt.Errorf("error upgrading connection: %w", err)
	}
	h := http.Header{}
	h.Set(corev1.PortHeader, strconv.Itoa(port))
	h.Set(corev1.PortForwardRequestIDHeader, "0")
	h.Set(corev1.StreamType, corev1.StreamTypeError)
	es, err := conn.CreateStream(h)
	if err != nil {
		conn.Close()
		return nil, err
	}
	_ = es.Close()
	h.Set(corev1.StreamType, corev1.StreamTypeData)
	ds, err := conn.CreateStream(h)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &streamConn{conn: conn, stream: ds}, nil
}
