package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// The Kubernetes manifests (kubernetes.yaml): N taskgraph instances (a
// Deployment behind a Service, probed on /healthz) beside a NATS JetStream
// cluster of three nodes (a StatefulSet behind a headless Service, its
// configuration a ConfigMap), the table from cloudformation.yaml. Built
// from k8s.io/api's types, so that a field Kubernetes does not have does
// not compile; kubernetes_test.go decodes the file strictly back into them.

// Settings of the manifests.
const (
	// Instances is the Deployment's replicas; NATSNodes the StatefulSet's,
	// and the event stream's replicas (-event-replicas).
	Instances = 3
	NATSNodes = 3
	// Image is the server's image, built from the Dockerfile and pushed to
	// the team's registry (replace it).
	Image = "registry.example.com/taskgraph:latest"
	// SecretName is the Secret the team makes with JWT_SECRET and
	// CURSOR_KEY (docs/scaling.md).
	SecretName = "taskgraph"
)

// natsVersion returns the nats-server version go.mod names: the image the
// StatefulSet runs is the server the embedded broker is.
func natsVersion() (string, error) {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		return "", err
	}
	v := regexp.MustCompile(`github.com/nats-io/nats-server/v2 v(\S+)`).FindSubmatch(b)
	if v == nil {
		return "", fmt.Errorf("go.mod names no nats-server")
	}
	return string(v[1]), nil
}

// natsURL names every NATS node by its stable name.
func natsURL() string {
	var urls []string
	for i := range NATSNodes {
		urls = append(urls, fmt.Sprintf("nats://nats-%d.nats:4222", i))
	}
	return strings.Join(urls, ",")
}

// natsConf is the NATS nodes' configuration: JetStream on its volume, the
// cluster's routes by the pods' stable names.
func natsConf() string {
	var routes []string
	for i := range NATSNodes {
		routes = append(routes, fmt.Sprintf("nats://nats-%d.nats:6222", i))
	}
	return fmt.Sprintf(`server_name: $POD_NAME
port: 4222
http: 8222
jetstream {
  store_dir: /data
}
cluster {
  name: taskgraph
  port: 6222
  routes: [%s]
}
`, strings.Join(routes, ", "))
}

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "taskgraph"}}
}

func selector(name string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": name}}
}

func ptr[T any](v T) *T { return &v }

func httpProbe(path string, port int, period, failures int32) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt(port)}},
		PeriodSeconds: period, FailureThreshold: failures, TimeoutSeconds: 3}
}

// kubernetesObjects are the manifests' objects, in the order applied.
func kubernetesObjects() ([]any, error) {
	ver, err := natsVersion()
	if err != nil {
		return nil, err
	}
	return []any{natsConfigMap(), natsService(), natsStatefulSet(ver), natsPDB(), serverServiceAccount(), serverService(), serverDeployment()}, nil
}

func natsConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta("nats"),
		Data: map[string]string{"nats.conf": natsConf()}}
}

func natsService() *corev1.Service {
	return &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta("nats"),
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true, // the nodes find each other before they are ready
			Selector: map[string]string{"app.kubernetes.io/name": "nats"},
			Ports: []corev1.ServicePort{{Name: "client", Port: 4222, TargetPort: intstr.FromString("client")},
				{Name: "cluster", Port: 6222, TargetPort: intstr.FromString("cluster")},
				{Name: "monitor", Port: 8222, TargetPort: intstr.FromString("monitor")}}}}
}

func natsStatefulSet(version string) *appsv1.StatefulSet {
	c := corev1.Container{Name: "nats", Image: "nats:" + version + "-alpine", Args: []string{"--config", "/etc/nats/nats.conf"},
		Env:          []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		Ports:        []corev1.ContainerPort{{Name: "client", ContainerPort: 4222}, {Name: "cluster", ContainerPort: 6222}, {Name: "monitor", ContainerPort: 8222}},
		VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/nats"}, {Name: "data", MountPath: "/data"}},
		// Ready once JetStream is current; alive while the server answers.
		StartupProbe:   httpProbe("/healthz", 8222, 5, 60),
		ReadinessProbe: httpProbe("/healthz?js-enabled-only=true", 8222, 10, 3),
		LivenessProbe:  httpProbe("/healthz?js-enabled-only=true", 8222, 30, 3),
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
	}
	return &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}, ObjectMeta: meta("nats"),
		Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(NATSNodes)), ServiceName: "nats", Selector: selector("nats"),
			PodManagementPolicy: appsv1.ParallelPodManagement, UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template: corev1.PodTemplateSpec{ObjectMeta: meta("nats"), Spec: corev1.PodSpec{
				Containers:                    []corev1.Container{c},
				TerminationGracePeriodSeconds: ptr(int64(60)),
				Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nats"}}}}},
			}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}}}},
		}}
}

// natsPDB keeps two of three nodes up through voluntary disruptions: the
// stream's quorum.
func natsPDB() *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"}, ObjectMeta: meta("nats"),
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr(intstr.FromInt(1)), Selector: selector("nats")}}
}

func serverServiceAccount() *corev1.ServiceAccount {
	sa := &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta("taskgraph")}
	// EKS: the role with the stack's ServerPolicyArn (IAM roles for service accounts).
	sa.Annotations = map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/taskgraph-server"}
	return sa
}

func serverService() *corev1.Service {
	return &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta("taskgraph"),
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app.kubernetes.io/name": "taskgraph"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}}
}

// serverContainer runs the image's command (the Dockerfile's CMD) with the
// stream in NATSNodes replicas.
func serverContainer() corev1.Container {
	secret := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: SecretName}, Key: key}}
	}
	return corev1.Container{Name: "taskgraph", Image: Image,
		Args: []string{"-production", "-store=aws", "-create-table=false", fmt.Sprintf("-event-replicas=%d", NATSNodes)},
		Env: []corev1.EnvVar{{Name: "AWS_REGION", Value: "eu-west-1"}, {Name: "TABLE_NAME", Value: DefaultTableName},
			{Name: "NATS_URL", Value: natsURL()}, {Name: "JWT_SECRET", ValueFrom: secret("JWT_SECRET")},
			{Name: "CURSOR_KEY", ValueFrom: secret("CURSOR_KEY")}, {Name: "METRICS_ADDR", Value: ":9090"}},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
		// Ready while the table answers (/healthz: 503 otherwise; a broker
		// outage leaves it 200, "degraded"); alive while it listens, so that
		// a table outage takes instances out of the Service, never restarts
		// them all.
		ReadinessProbe: httpProbe("/healthz", 8080, 5, 2),
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}},
			PeriodSeconds: 10, FailureThreshold: 6},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}, // GOMEMLIMIT: 75% of it
		SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65532)), ReadOnlyRootFilesystem: ptr(true),
			AllowPrivilegeEscalation: ptr(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
	}
}

func serverDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta("taskgraph"),
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(Instances)), Selector: selector("taskgraph"),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr(intstr.FromInt(0)), MaxSurge: ptr(intstr.FromInt(1))}},
			Template: corev1.PodTemplateSpec{ObjectMeta: meta("taskgraph"), Spec: corev1.PodSpec{
				ServiceAccountName: "taskgraph", Containers: []corev1.Container{serverContainer()},
				// The server's grace (15 s for requests in flight) and the
				// subscriptions' end, within the pod's.
				TerminationGracePeriodSeconds: ptr(int64(30)),
			}}}}
}

// RenderKubernetes returns the manifests as one YAML stream.
func RenderKubernetes() ([]byte, error) {
	objs, err := kubernetesObjects()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("# Generated by `go generate ./deploy` from k8s.io/api's types (deploy/kubernetes.go). DO NOT EDIT.\n")
	b.WriteString("# taskgraph on Kubernetes: " + fmt.Sprint(Instances) + " instances beside a NATS JetStream cluster of " + fmt.Sprint(NATSNodes) +
		" nodes; the table from cloudformation.yaml; the Secret " + SecretName + " (JWT_SECRET, CURSOR_KEY) made by hand: docs/scaling.md.\n")
	for _, o := range objs {
		y, err := cleanYAML(o)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes(), nil
}

// cleanYAML marshals o without what the API server fills in (an empty
// status, a null creation time).
func cleanYAML(o any) ([]byte, error) {
	j, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	prune(v)
	return yaml.Marshal(v)
}

// prune drops what the API server fills in: status, a null
// creationTimestamp, and the empty maps left of them.
func prune(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "status")
		if x["creationTimestamp"] == nil {
			delete(x, "creationTimestamp")
		}
		for k, e := range x {
			prune(e)
			if m, ok := e.(map[string]any); ok && len(m) == 0 && (k == "metadata" || k == "resources" || k == "strategy") {
				delete(x, k)
			}
		}
	case []any:
		for _, e := range x {
			prune(e)
		}
	}
}
