package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// manifests is kubernetes.yaml decoded strictly.
type manifests struct {
	config   *corev1.ConfigMap
	natsSvc  *corev1.Service
	nats     *appsv1.StatefulSet
	pdb      *policyv1.PodDisruptionBudget
	sa       *corev1.ServiceAccount
	svc      *corev1.Service
	instance *appsv1.Deployment
}

// decodeManifests decodes each document of a YAML stream into the
// k8s.io/api type its apiVersion and kind name, refusing a field the type
// does not have (what kubectl's server-side validation refuses) and a kind
// it does not expect.
func decodeManifests(b []byte) (*manifests, error) {
	m := &manifests{}
	for i, doc := range strings.Split(string(b), "\n---\n")[1:] {
		var tm struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		var into any
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 ConfigMap":
			m.config = &corev1.ConfigMap{}
			into = m.config
		case "v1 Service":
			s := &corev1.Service{}
			into = s
			defer func() {
				if s.Name == "nats" {
					m.natsSvc = s
				} else {
					m.svc = s
				}
			}()
		case "apps/v1 StatefulSet":
			m.nats = &appsv1.StatefulSet{}
			into = m.nats
		case "policy/v1 PodDisruptionBudget":
			m.pdb = &policyv1.PodDisruptionBudget{}
			into = m.pdb
		case "v1 ServiceAccount":
			m.sa = &corev1.ServiceAccount{}
			into = m.sa
		case "apps/v1 Deployment":
			m.instance = &appsv1.Deployment{}
			into = m.instance
		default:
			return nil, fmt.Errorf("document %d: an unexpected %s %s", i+1, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i+1, tm.Kind, err)
		}
	}
	return m, nil
}

func mustManifests(t *testing.T) *manifests {
	t.Helper()
	m, err := decodeManifests([]byte(mustRead(t, "kubernetes.yaml")))
	if err != nil {
		t.Fatalf("kubernetes.yaml: %v", err)
	}
	if m.config == nil || m.natsSvc == nil || m.nats == nil || m.pdb == nil || m.sa == nil || m.svc == nil || m.instance == nil {
		t.Fatalf("kubernetes.yaml lacks an object: %+v", m)
	}
	return m
}

func TestKubernetesManifestsAreCurrent(t *testing.T) {
	want, err := RenderKubernetes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal([]byte(mustRead(t, "kubernetes.yaml")), want) {
		t.Fatal("deploy/kubernetes.yaml is out of date with deploy/kubernetes.go: run 'go generate ./deploy' and commit it")
	}
}

// The strict decoding is what proves the manifests, as no kubeconform or
// API server runs offline: it must refuse what they refuse.
func TestKubernetesManifestsDecodeStrictly(t *testing.T) {
	mustManifests(t)
	good := mustRead(t, "kubernetes.yaml")
	for _, bad := range []struct{ name, from, to string }{
		{"a misspelled field", "  replicas: 3\n  selector:", "  replica: 3\n  selector:"},
		{"a field of another kind", "  podManagementPolicy: Parallel", "  podManagementPolicy: Parallel\n  minReadySecondz: 5"},
		{"a value of the wrong type", "  replicas: 3", "  replicas: three"},
		{"an unknown kind", "kind: ConfigMap", "kind: ConfigMapp"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			changed := strings.Replace(good, bad.from, bad.to, 1)
			if changed == good {
				t.Fatalf("%q is not in kubernetes.yaml", bad.from)
			}
			if _, err := decodeManifests([]byte(changed)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// serverEnv returns the environment variables the server reads (-h's list
// in app/config.go), and the AWS SDK's.
func serverEnv(t *testing.T) func(string) bool {
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`\{"([A-Z_]+)", "`).FindAllStringSubmatch(mustRead(t, "../app/config.go"), -1) {
		names[m[1]] = true
	}
	return func(n string) bool { return names[n] || strings.HasPrefix(n, "AWS_") }
}

func TestKubernetesRunsInstancesBesideANATSCluster(t *testing.T) {
	m := mustManifests(t)
	d := m.instance
	c := d.Spec.Template.Spec.Containers[0]
	if *d.Spec.Replicas != Instances || !matches(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) ||
		!matches(m.svc.Spec.Selector, d.Spec.Template.Labels) {
		t.Fatalf("the Deployment: %d replicas, selector %v, pod labels %v, Service selector %v", *d.Spec.Replicas,
			d.Spec.Selector.MatchLabels, d.Spec.Template.Labels, m.svc.Spec.Selector)
	}
	var cmd []string
	if err := json.Unmarshal([]byte(instruction(mustRead(t, "../Dockerfile"), "CMD")[0]), &cmd); err != nil {
		t.Fatal(err)
	}
	if want := append(cmd, fmt.Sprintf("-event-replicas=%d", NATSNodes)); !slices.Equal(c.Args, want) {
		t.Errorf("the instances run %q, want the image's command and the stream's replicas: %q", c.Args, want)
	}
	port := c.Ports[0]
	if r := c.ReadinessProbe; r == nil || r.HTTPGet == nil || r.HTTPGet.Path != "/healthz" || r.HTTPGet.Port.IntValue() != int(port.ContainerPort) {
		t.Errorf("the readiness probe %+v is not GET /healthz on the server's port %d", r, port.ContainerPort)
	}
	if l := c.LivenessProbe; l == nil || l.TCPSocket == nil || l.HTTPGet != nil {
		t.Errorf("the liveness probe %+v: a table outage (/healthz 503) must not restart every instance", l)
	}
	if m.svc.Spec.Ports[0].TargetPort.String() != port.Name {
		t.Errorf("the Service targets %s, the container's port is %s", m.svc.Spec.Ports[0].TargetPort.String(), port.Name)
	}
	known := serverEnv(t)
	env := map[string]string{}
	for _, e := range c.Env {
		if !known(e.Name) {
			t.Errorf("the instances set %s, which the server does not read", e.Name)
		}
		env[e.Name] = e.Value
	}
	var want []string
	for i := range int(*m.nats.Spec.Replicas) {
		want = append(want, fmt.Sprintf("nats://%s-%d.%s:4222", m.nats.Name, i, m.nats.Spec.ServiceName))
	}
	if env["NATS_URL"] != strings.Join(want, ",") {
		t.Errorf("NATS_URL is %q, want every node: %q", env["NATS_URL"], strings.Join(want, ","))
	}
	checkNATS(t, m)
}

// checkNATS: three nodes of one JetStream cluster behind a headless
// Service, each routed to every other by its stable name, two always up.
func checkNATS(t *testing.T, m *manifests) {
	t.Helper()
	s := m.nats
	if *s.Spec.Replicas != NATSNodes || s.Spec.ServiceName != m.natsSvc.Name || m.natsSvc.Spec.ClusterIP != corev1.ClusterIPNone ||
		!matches(s.Spec.Selector.MatchLabels, s.Spec.Template.Labels) || !matches(m.natsSvc.Spec.Selector, s.Spec.Template.Labels) {
		t.Fatalf("the NATS StatefulSet (%d replicas, service %q) and its headless Service (clusterIP %q) do not match", *s.Spec.Replicas,
			s.Spec.ServiceName, m.natsSvc.Spec.ClusterIP)
	}
	conf := m.config.Data["nats.conf"]
	if !strings.Contains(conf, "jetstream {") || !strings.Contains(conf, "store_dir: /data") {
		t.Errorf("nats.conf has no JetStream on the volume:\n%s", conf)
	}
	for i := range NATSNodes {
		if r := fmt.Sprintf("nats://%s-%d.%s:6222", s.Name, i, s.Spec.ServiceName); !strings.Contains(conf, r) {
			t.Errorf("nats.conf does not route to %s", r)
		}
	}
	if len(s.Spec.VolumeClaimTemplates) != 1 || s.Spec.VolumeClaimTemplates[0].Name != "data" ||
		s.Spec.Template.Spec.Volumes[0].ConfigMap == nil || s.Spec.Template.Spec.Volumes[0].ConfigMap.Name != m.config.Name {
		t.Errorf("the nodes keep no stream on a volume of their own, or do not mount nats.conf")
	}
	if m.pdb.Spec.MaxUnavailable == nil || m.pdb.Spec.MaxUnavailable.IntValue() != NATSNodes/2 || !matches(m.pdb.Spec.Selector.MatchLabels, s.Spec.Template.Labels) {
		t.Errorf("the disruption budget %+v does not keep a quorum of the nodes", m.pdb.Spec)
	}
}

// matches reports whether every label of sel is in labels.
func matches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return len(sel) > 0
}
