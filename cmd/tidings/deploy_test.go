package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestComposeFile reads deploy/compose.yaml and checks it against what it names: the
// image scripts/image.sh builds, the nginx configuration in deploy/ (whose upstreams are
// the two instances on the port the image listens on), PostgreSQL with a named volume.
func TestComposeFile(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	raw, err := os.ReadFile("../../deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type network struct {
		IPv4 string `yaml:"ipv4_address"`
	}
	var compose struct {
		Services map[string]struct {
			Image       string
			Environment map[string]string
			Volumes     []string
			Ports       []string
			Networks    map[string]network
		}
		Networks map[string]struct {
			IPAM struct{ Config []struct{ Subnet string } }
		}
		Volumes map[string]any
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("deploy/compose.yaml: %v", err)
	}
	script, err := os.ReadFile("../../scripts/image.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`TAG="\$\{TAG:-([^}]+)\}"`).FindSubmatch(script)
	if m == nil {
		t.Fatal("scripts/image.sh: no TAG default")
	}
	imageTag := string(m[1])
	conf, err := os.ReadFile("../../deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	upstreams := regexp.MustCompile(`(?m)^\s*server (\d+\.\d+\.\d+\.\d+):(\d+)`).FindAllStringSubmatch(string(conf), -1)

	var instances []string
	for name, s := range compose.Services {
		if s.Image != "${TIDINGS_IMAGE:-"+imageTag+"}" {
			continue
		}
		for _, n := range s.Networks {
			instances = append(instances, n.IPv4+":8080") // the image listens on 0.0.0.0:8080
		}
		if !strings.HasPrefix(s.Environment["TIDINGS_DATABASE_URL"], "postgres://") || !strings.Contains(s.Environment["TIDINGS_DATABASE_URL"], "@db:5432/") {
			t.Errorf("%s: TIDINGS_DATABASE_URL %q: want postgres://…@db:5432/…", name, s.Environment["TIDINGS_DATABASE_URL"])
		}
		if proxy := compose.Services["nginx"].Networks["tidings"].IPv4; s.Environment["TIDINGS_TRUSTED_PROXIES"] != proxy {
			t.Errorf("%s: TIDINGS_TRUSTED_PROXIES %q; want nginx's address %q", name, s.Environment["TIDINGS_TRUSTED_PROXIES"], proxy)
		}
	}
	var want []string
	for _, u := range upstreams {
		want = append(want, u[1]+":"+u[2])
	}
	slices.Sort(instances)
	slices.Sort(want)
	if len(instances) != 2 || !slices.Equal(instances, want) {
		t.Errorf("instances of %s at %v; nginx.conf's upstreams are %v", imageTag, instances, want)
	}

	db := compose.Services["db"]
	if !strings.HasPrefix(db.Image, "postgres:") {
		t.Errorf("db: image %q, want postgres:…", db.Image)
	}
	if _, ok := compose.Volumes["db"]; !ok || !slices.Contains(db.Volumes, "db:/var/lib/postgresql/data") {
		t.Errorf("db: volumes %v, top-level %v: want the named volume db at /var/lib/postgresql/data", db.Volumes, compose.Volumes)
	}

	nginx := compose.Services["nginx"]
	mounted := false
	for _, v := range nginx.Volumes {
		src, dst, _ := strings.Cut(v, ":")
		if strings.HasPrefix(dst, "/etc/nginx/conf.d/") {
			if _, err := os.Stat(filepath.Join("../../deploy", src)); err != nil {
				t.Errorf("nginx mounts %s: %v", src, err)
			}
			mounted = filepath.Base(src) == "nginx.conf"
		}
	}
	if !mounted || !strings.HasPrefix(nginx.Image, "nginx:") || !slices.Contains(nginx.Ports, "443:443") {
		t.Errorf("nginx: image %q, volumes %v, ports %v: want nginx with ./nginx.conf in conf.d and 443", nginx.Image, nginx.Volumes, nginx.Ports)
	}
	subnets := compose.Networks["tidings"].IPAM.Config
	if len(subnets) != 1 || subnets[0].Subnet != "10.0.0.0/24" {
		t.Errorf("network tidings: %+v; want the subnet 10.0.0.0/24 of nginx.conf's addresses", subnets)
	}
}

// TestSystemdUnit: deploy/tidings.service has what the issue asks, and
// systemd-analyze verify accepts it where it is installed.
func TestSystemdUnit(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	unit, err := os.ReadFile("../../deploy/tidings.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"ExecStart=/usr/local/bin/tidings serve", "DynamicUser=yes", "StateDirectory=tidings",
		"Environment=TIDINGS_DATA=/var/lib/tidings", "ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes",
		"ProtectHome=yes", "Restart=on-failure", "KillSignal=SIGTERM", "TimeoutStopSec=60s"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + `$`).Match(unit) {
			t.Errorf("deploy/tidings.service lacks %s", line)
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed: the unit's syntax is not verified (not required)")
	}
	// verify also checks that ExecStart's program exists: this test's own binary
	// stands in for /usr/local/bin/tidings.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tidings.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/tidings", self)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(analyze, "verify", path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify deploy/tidings.service: %v\n%s", err, out)
	}
}

// TestDocsRunTheImage: the README's, operations.md's and deploy.md's docker run is one
// command, and it runs what scripts/image.sh builds: its default tag, the image's port
// and its data volume (TestImage runs the image itself).
func TestDocsRunTheImage(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	script, err := os.ReadFile("../../scripts/image.sh")
	if err != nil {
		t.Fatal(err)
	}
	tag := regexp.MustCompile(`TAG="\$\{TAG:-([^}]+)\}"`).FindSubmatch(script)
	containerfile, err := os.ReadFile("../../Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"FROM scratch", "ENV TIDINGS_DATA=/data TIDINGS_ADDR=0.0.0.0:8080", "VOLUME /data", "EXPOSE 8080", "USER 65532:65532",
		`ENTRYPOINT ["/tidings"]`, `CMD ["serve"]`} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + `$`).Match(containerfile) {
			t.Errorf("Containerfile lacks %s", line)
		}
	}
	if target, err := os.Readlink("../../Dockerfile"); err != nil || target != "Containerfile" {
		t.Errorf("Dockerfile: %q, %v; want a link to Containerfile", target, err)
	}
	var commands []string
	for _, doc := range []string{"README.md", "docs/operations.md", "docs/deploy.md"} {
		text, err := os.ReadFile(filepath.Join("../..", doc))
		if err != nil {
			t.Fatal(err)
		}
		run := regexp.MustCompile("docker run [^`\n]+").Find(text)
		if run == nil {
			t.Errorf("%s: no docker run", doc)
			continue
		}
		commands = append(commands, string(run))
	}
	want := "docker run -d --name tidings -p 127.0.0.1:8080:8080 -v tidings-data:/data " + string(tag[1])
	for _, c := range commands {
		if strings.TrimSpace(c) != want {
			t.Errorf("the docs run %q; want %q", c, want)
		}
	}
}
