package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/internal/testenv"
)

// imageMaxBytes is the target for the image: under 40 MB.
const imageMaxBytes = 40 << 20

// buildah runs buildah with the storage driver this machine allows (STORAGE_DRIVER,
// default vfs: overlay mounts are not allowed here) and returns its standard output.
func buildah(t *testing.T, args ...string) (string, error) {
	t.Helper()
	driver := os.Getenv("STORAGE_DRIVER")
	if driver == "" {
		driver = "vfs"
	}
	var out, errs bytes.Buffer
	cmd := exec.Command("buildah", append([]string{"--storage-driver", driver}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("buildah %s: %v\n%s", strings.Join(args, " "), err, errs.String())
	}
	return out.String(), nil
}

func isolation() string {
	if v := os.Getenv("BUILDAH_ISOLATION"); v != "" {
		return v
	}
	return "chroot" // the only isolation that runs here (no user namespaces for runc)
}

// imageConfig is the part of an image's configuration the Packaging contract names.
type imageConfig struct {
	User         string
	Env          []string
	Entrypoint   []string
	Cmd          []string
	ExposedPorts map[string]struct{}
	Volumes      map[string]struct{}
	Healthcheck  *struct{ Test []string }
}

// TestImage builds the container image with scripts/image.sh, runs it as the README
// says (a data folder at /data, the port from the environment), publishes the README's
// event and reads it back, stops it with SIGTERM (exit 0), runs it again on the same
// data (the event is still there), and checks the image's size and that the server
// does not run as root.
func TestImage(t *testing.T) {
	testbackend.Once(t)
	if testing.Short() {
		t.Skip("builds and runs the container image")
	}
	if _, err := exec.LookPath("buildah"); err != nil {
		testenv.Need(t, "buildah is not installed (apt-get install -y buildah): the container image is not built")
	}
	t.Parallel()
	tag := fmt.Sprintf("localhost/tidings-test:%d-%d", os.Getpid(), time.Now().UnixNano())

	// 1. Build, as a self-hoster would.
	build := exec.Command("scripts/image.sh")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "TAG="+tag, "BUILDER=buildah", "BUILDAH_ISOLATION="+isolation())
	if os.Getenv("STORAGE_DRIVER") == "" {
		build.Env = append(build.Env, "STORAGE_DRIVER=vfs")
	}
	out, err := build.CombinedOutput()
	t.Cleanup(func() { buildah(t, "rmi", "--force", tag) })
	if err != nil {
		t.Fatalf("scripts/image.sh: %v\n%s", err, out)
	}

	// The image's configuration is the contract's.
	inspect, err := buildah(t, "inspect", "--type", "image", tag)
	if err != nil {
		t.Fatal(err)
	}
	var img struct {
		Manifest string
		Docker   struct{ Config imageConfig }
	}
	if err := json.Unmarshal([]byte(inspect), &img); err != nil {
		t.Fatal(err)
	}
	conf := img.Docker.Config
	if !slices.Equal(conf.Entrypoint, []string{"/tidings"}) || !slices.Equal(conf.Cmd, []string{"serve"}) {
		t.Errorf("entrypoint %q, cmd %q; want [/tidings] [serve]", conf.Entrypoint, conf.Cmd)
	}
	if !slices.Contains(conf.Env, "TIDINGS_DATA=/data") || !slices.Contains(conf.Env, "TIDINGS_ADDR=0.0.0.0:8080") {
		t.Errorf("env %q: want TIDINGS_DATA=/data and TIDINGS_ADDR=0.0.0.0:8080", conf.Env)
	}
	if _, ok := conf.ExposedPorts["8080/tcp"]; !ok {
		t.Errorf("exposed ports %v: want 8080/tcp", conf.ExposedPorts)
	}
	if _, ok := conf.Volumes["/data"]; !ok {
		t.Errorf("volumes %v: want /data", conf.Volumes)
	}
	if conf.Healthcheck == nil || !slices.Equal(conf.Healthcheck.Test, []string{"CMD", "/tidings", "health"}) {
		t.Errorf("healthcheck %+v: want CMD /tidings health", conf.Healthcheck)
	}
	if u, _, _ := strings.Cut(conf.User, ":"); u == "" || u == "0" || u == "root" {
		t.Errorf("user %q: want a non-root user", conf.User)
	}

	// 6a. The size: the layers, uncompressed (what a registry stores is smaller).
	var manifest struct{ Layers []struct{ Size int64 } }
	if err := json.Unmarshal([]byte(img.Manifest), &manifest); err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, l := range manifest.Layers {
		size += l.Size
	}
	t.Logf("image %s: %d layer(s), %.1f MB uncompressed", tag, len(manifest.Layers), float64(size)/1e6)
	if size == 0 || size >= imageMaxBytes {
		t.Errorf("image size %d bytes: want under %d", size, imageMaxBytes)
	}

	// 2. A container on a data folder of the host. The server in the image runs as a
	// user the folder must let write (as a named volume is, from the image's /data).
	ctrOut, err := buildah(t, "from", "--name", fmt.Sprintf("tidings-test-%d-%d", os.Getpid(), time.Now().UnixNano()), tag)
	if err != nil {
		t.Fatal(err)
	}
	ctr := strings.TrimSpace(ctrOut)
	t.Cleanup(func() { buildah(t, "rm", ctr) })
	// A named volume starts as a copy of the image's /data: the server's user must own
	// it. SQLite's temporary files go to /tmp, writable by everyone (sticky).
	root, err := buildah(t, "mount", ctr)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		path string
		uid  uint32
		mode os.FileMode
	}{{"data", 65532, os.ModeDir | 0o700}, {"tmp", 0, os.ModeDir | os.ModeSticky | 0o777}, {"tidings", 0, 0o755}} {
		fi, err := os.Stat(filepath.Join(strings.TrimSpace(root), want.path))
		if err != nil {
			t.Fatal(err)
		}
		if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != want.uid || fi.Mode() != want.mode {
			t.Errorf("/%s in the image: uid %d, mode %v; want uid %d, mode %v", want.path, uid, fi.Mode(), want.uid, want.mode)
		}
	}
	buildah(t, "umount", ctr)
	// buildah run mounts an anonymous volume for the image's VOLUME over a -v bind
	// mount at the same path; this container's /data is the host's folder instead.
	if _, err := buildah(t, "config", "--volume", "/data-", ctr); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	if err := os.Chmod(data, 0o777); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	url := "http://" + addr
	runArgs := func(cmd ...string) []string {
		return append([]string{"run", "--isolation", isolation(), "--env", "TIDINGS_ADDR=" + addr, "-v", data + ":/data", ctr, "--"}, cmd...)
	}
	driver := os.Getenv("STORAGE_DRIVER")
	if driver == "" {
		driver = "vfs"
	}
	serve := func() *imageServer {
		t.Helper()
		return startImageServer(t, url, exec.Command("buildah", append([]string{"--storage-driver", driver}, runArgs(append(conf.Entrypoint, conf.Cmd...)...)...)...))
	}
	inImage := func(args ...string) string {
		t.Helper()
		out, err := buildah(t, runArgs(append([]string{"/tidings"}, args...)...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	// 3. The first server; the account and tokens through the CLI in the image, beside
	// it (as `docker exec` would), then the README's event over HTTP.
	srv := serve()
	if out := inImage("health"); !strings.Contains(out, "ready") { // the HEALTHCHECK's command
		t.Fatalf("/tidings health in the image: %q", out)
	}
	inImage("account", "create", "acme")
	inImage("project", "create", "my-saas")
	inImage("channel", "create", "my-saas", "payments")
	public := strings.TrimSpace(inImage("token", "create", "--access", "public", "--project", "my-saas"))
	full := strings.TrimSpace(inImage("token", "create", "--access", "full"))
	body := readmePublishBody(t)
	req, _ := http.NewRequest("POST", url+"/v1/log", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+public)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/log with the README's body: %s", res.Status)
	}
	readBack(t, url, full)

	// 6b. Not root: the server process's real and effective user.
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", srv.pid))
	if err != nil {
		t.Fatal(err)
	}
	uids := regexp.MustCompile(`(?m)^Uid:\s+(\d+)\s+(\d+)`).FindStringSubmatch(string(status))
	if uids == nil || uids[1] == "0" || uids[2] == "0" {
		t.Errorf("the server in the image runs as uid %q: want a non-root user", uids)
	}

	// 4. SIGTERM to the server: it shuts down cleanly, exit status 0.
	srv.stop(t)

	// 5. Again on the same data: the event is still there.
	srv = serve()
	readBack(t, url, full)
	srv.stop(t)
}

// imageServer is `buildah run … /tidings serve` and the server process in it.
type imageServer struct {
	cmd    *exec.Cmd
	pid    int // /tidings serve, in the container
	exited chan error
	log    string // the file its output goes to
}

// startImageServer starts cmd and waits until the server answers /readyz at url.
func startImageServer(t *testing.T, url string, cmd *exec.Cmd) *imageServer {
	t.Helper()
	s := &imageServer{cmd: cmd, exited: make(chan error, 1), log: filepath.Join(t.TempDir(), "serve.log")}
	f, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// Killing buildah run would leave the server behind: kill the server first.
		if s.pid != 0 {
			syscall.Kill(s.pid, syscall.SIGKILL)
		}
		cmd.Process.Kill()
	})
	s.pid = descendant(t, cmd.Process.Pid, "/tidings\x00serve\x00")
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-s.exited:
			t.Fatalf("the image's server exited: %v\n%s", err, s.output())
		default:
		}
		if res, err := http.Get(url + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the image's server did not answer /readyz on %s within 3 minutes:\n%s", url, s.output())
		}
	}
}

func (s *imageServer) output() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// stop sends SIGTERM to the server process in the container (buildah run does not
// pass signals on: it kills) and waits for buildah run to report its exit status.
func (s *imageServer) stop(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(s.pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		s.pid = 0
		if err != nil {
			t.Fatalf("after SIGTERM the server exited with %v: want status 0\n%s", err, s.output())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the server had not exited 2 minutes after SIGTERM\n%s", s.output())
	}
}

// descendant is the process under root whose command line is cmdline, waiting for it
// to appear (buildah run starts it through helpers of its own).
func descendant(t *testing.T, root int, cmdline string) int {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		parent := map[int]int{}
		var found []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				continue
			}
			// pid (comm) state ppid …: comm may hold spaces, so read after the last ')'.
			fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			if len(fields) > 1 {
				parent[pid], _ = strconv.Atoi(fields[1])
			}
			if cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && string(cl) == cmdline {
				found = append(found, pid)
			}
		}
		for _, pid := range found {
			for p := parent[pid]; p > 1; p = parent[p] {
				if p == root {
					return pid
				}
			}
		}
	}
	t.Fatalf("no process %q under %d", strings.ReplaceAll(cmdline, "\x00", " "), root)
	return 0
}

// readmePublishBody is the JSON of the README's first curl to POST /v1/log.
func readmePublishBody(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)curl -X POST localhost:8080/v1/log .*?-d '([^']*)'`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md: no curl -X POST localhost:8080/v1/log … -d '…'")
	}
	return string(m[1])
}

// readBack finds the README's event through GET /v1/events.
func readBack(t *testing.T, url, token string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/v1/events?project=my-saas&channel=payments", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var page struct {
		Events []struct {
			Event string `json:"event"`
		} `json:"events"`
	}
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/events: %s, %v", res.Status, err)
	}
	if len(page.Events) != 1 || page.Events[0].Event != "New Subscription" {
		t.Fatalf("GET /v1/events: %+v; want the README's one event, New Subscription", page.Events)
	}
}
