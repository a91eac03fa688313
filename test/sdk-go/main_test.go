// Conformance suite: the official Go SDK (github.com/huaweicloud/huaweicloud-sdk-go-v3,
// pinned in go.mod), used unchanged, against a listening mock-hcs (issue 13, HCS-5).
//
// test/sdk/run.sh starts mock-hcs (HTTPS with --tls-dir, sped-up clock) and
// runs `go test ./...` with:
//
//	MOCK_HCS_ENDPOINT  https://127.0.0.1:PORT
//	SSL_CERT_FILE      the CA mock-hcs wrote (Go's documented trust override)
//	MOCK_HCS_ADMIN     the admin URL (the same endpoint; only /_admin/catalog is read)
//
// Credentials are those of mock-hcs's default cloud (mock-hcs/src/config.ts).
package sdkgo

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/huaweicloud/huaweicloud-sdk-go-v3/core"
	"github.com/huaweicloud/huaweicloud-sdk-go-v3/core/auth"
	"github.com/huaweicloud/huaweicloud-sdk-go-v3/core/auth/basic"
	"github.com/huaweicloud/huaweicloud-sdk-go-v3/core/auth/global"
	"github.com/huaweicloud/huaweicloud-sdk-go-v3/core/auth/signer/algorithm"
	"github.com/huaweicloud/huaweicloud-sdk-go-v3/core/config"
	"github.com/huaweicloud/huaweicloud-sdk-go-v3/core/sdkerr"
)

// The default cloud of mock-hcs (mock-hcs/src/config.ts defaultCloudConfig).
const (
	projectID   = "0a1b2c3d4e5f40718293a4b5c6d7e8f9"
	otherID     = "f9e8d7c6b5a449382716059483726150"
	regionID    = "hcs-region-1"
	ak          = "TESTBEDAK0000000000001"
	sk          = "testbed-secret-key-0000000000000000000001"
	otherAK     = "OTHERAK00000000000002"
	otherSK     = "other-secret-key-0000000000000000000002"
	domainID    = "3c1d2e4f5a6b47c8d9e0f1a2b3c4d5e6"
	domainName  = "testbed-account"
	userName    = "testbed-admin"
	userPass    = "Testbed@123"
	vpcID       = "3d6c4f0e-5b1a-4c8e-9f2d-7a1b2c3d4e5f"
	workerNet   = "8a1f0c2e-1b1a-4c8e-9f2d-000000000010"
	workerV4Sub = "5c2e9d1a-1b1a-4c8e-9f2d-000000000010"
	imageV131   = "6b1e2a4c-31a0-4a6f-8d3e-1f0000000131"
	missing     = "00000000-0000-4000-8000-000000000000"
)

var endpoint string

func TestMain(m *testing.M) {
	endpoint = os.Getenv("MOCK_HCS_ENDPOINT")
	if endpoint == "" {
		fmt.Fprintln(os.Stderr, "MOCK_HCS_ENDPOINT is not set: run test/sdk/run.sh (it starts mock-hcs and sets it)")
		os.Exit(2)
	}
	code := m.Run()
	printSummary()
	os.Exit(code)
}

// ---- per-call results (the SDK x call table in mock-hcs/README.md) ----

var (
	resultsMu sync.Mutex
	results   []string
)

// call runs one SDK call check as a subtest named "<service>/<Call>" and records its outcome.
func call(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	ok := t.Run(name, f)
	resultsMu.Lock()
	defer resultsMu.Unlock()
	status := "PASS"
	if !ok {
		status = "FAIL"
	}
	results = append(results, fmt.Sprintf("%s %s", status, name))
}

func printSummary() {
	pass, fail := 0, 0
	for _, r := range results {
		if strings.HasPrefix(r, "PASS") {
			pass++
		} else {
			fail++
		}
	}
	if path := os.Getenv("SDK_RESULTS_FILE"); path != "" {
		_ = os.WriteFile(path, []byte(strings.Join(results, "\n")+"\n"), 0o644)
	}
	fmt.Printf("sdk-go: %d passed, %d failed (%d SDK call checks)\n", pass, fail, len(results))
}

// ---- clients ----

func httpConfig(alg algorithm.SigningAlgorithm) *config.HttpConfig {
	return config.DefaultHttpConfig().WithSigningAlgorithm(alg).WithTimeout(20 * time.Second)
}

func basicCred(t *testing.T, key, secret, project string) auth.ICredential {
	t.Helper()
	b := basic.NewCredentialsBuilder().WithAk(key).WithSk(secret)
	if project != "" {
		b = b.WithProjectId(project)
	}
	c, err := b.SafeBuild()
	if err != nil {
		t.Fatalf("basic credentials: %v", err)
	}
	return c
}

func globalCred(t *testing.T) auth.ICredential {
	t.Helper()
	c, err := global.NewCredentialsBuilder().WithAk(ak).WithSk(sk).WithDomainId(domainID).SafeBuild()
	if err != nil {
		t.Fatalf("global credentials: %v", err)
	}
	return c
}

func hcClient(t *testing.T, cred auth.ICredential, alg algorithm.SigningAlgorithm) *core.HcHttpClient {
	t.Helper()
	c, err := core.NewHcHttpClientBuilder().WithEndpoints([]string{endpoint}).WithCredential(cred).WithHttpConfig(httpConfig(alg)).SafeBuild()
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

// ---- assertions ----

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wantErr: the SDK's ServiceResponseError carries the status, error_code, error_msg and the request id.
func wantErr(t *testing.T, err error, status int, code string) *sdkerr.ServiceResponseError {
	t.Helper()
	if err == nil {
		t.Fatalf("expected %d %s, got success", status, code)
	}
	var se *sdkerr.ServiceResponseError
	if !errors.As(err, &se) {
		t.Fatalf("expected *sdkerr.ServiceResponseError, got %T: %v", err, err)
	}
	if se.StatusCode != status || se.ErrorCode != code {
		t.Fatalf("expected %d %s, got %d %s (%s)", status, code, se.StatusCode, se.ErrorCode, se.ErrorMessage)
	}
	if se.ErrorMessage == "" || strings.HasPrefix(se.ErrorMessage, "{") {
		t.Fatalf("error_msg not decoded: %q", se.ErrorMessage)
	}
	if len(se.RequestId) != 32 {
		t.Fatalf("request id not set: %q", se.RequestId)
	}
	return se
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func nonEmpty(t *testing.T, what, v string) {
	t.Helper()
	if v == "" {
		t.Fatalf("%s is empty", what)
	}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func ptr[T any](v T) *T { return &v }

// poll until done() or the deadline (mock-hcs runs with a sped-up clock: builds take well under a second).
func poll(t *testing.T, what string, done func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := done()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not done after 30s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
