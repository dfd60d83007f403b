package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ecs"
)

// decodeECS decodes a task definition in the CLI's JSON strictly into the
// SDK's input type (members matched by name, as the API does, ignoring
// case): a member ECS does not have is refused.
func decodeECS(b []byte) (*ecs.RegisterTaskDefinitionInput, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var in ecs.RegisterTaskDefinitionInput
	if err := dec.Decode(&in); err != nil {
		return nil, err
	}
	return &in, nil
}

func TestECSTaskDefinitionIsCurrent(t *testing.T) {
	want, err := RenderECS()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal([]byte(mustRead(t, "ecs-task-definition.json")), want) {
		t.Fatal("deploy/ecs-task-definition.json is out of date with deploy/ecs.go: run 'go generate ./deploy' and commit it")
	}
}

func TestECSTaskDefinitionDecodesStrictlyAndRunsTheImage(t *testing.T) {
	good := mustRead(t, "ecs-task-definition.json")
	for _, bad := range []struct{ name, from, to string }{
		{"a misspelled member", `"containerDefinitions"`, `"containerDefinition"`},
		{"a value of the wrong type", `"containerPort": 8080`, `"containerPort": "8080"`},
	} {
		if _, err := decodeECS([]byte(strings.Replace(good, bad.from, bad.to, 1))); err == nil {
			t.Errorf("%s: accepted", bad.name)
		}
	}
	td, err := decodeECS([]byte(good))
	if err != nil {
		t.Fatalf("ecs-task-definition.json: %v", err)
	}
	c := td.ContainerDefinitions[0]
	var cmd []string
	if err := json.Unmarshal([]byte(instruction(mustRead(t, "../Dockerfile"), "CMD")[0]), &cmd); err != nil {
		t.Fatal(err)
	}
	if want := append(cmd, fmt.Sprintf("-event-replicas=%d", NATSNodes)); !slices.Equal(c.Command, want) {
		t.Errorf("the task runs %q, want %q", c.Command, want)
	}
	if *c.PortMappings[0].ContainerPort != 8080 || *c.User != "65532:65532" || !*c.ReadonlyRootFilesystem || string(td.NetworkMode) != "awsvpc" {
		t.Errorf("the task's port %d, user %s, read-only root %v, network %s", *c.PortMappings[0].ContainerPort, *c.User, *c.ReadonlyRootFilesystem, td.NetworkMode)
	}
	known := serverEnv(t)
	names := map[string]string{}
	for _, e := range c.Environment {
		names[*e.Name] = *e.Value
	}
	for _, s := range c.Secrets {
		names[*s.Name] = "secret"
	}
	for n := range names {
		if !known(n) {
			t.Errorf("the task sets %s, which the server does not read", n)
		}
	}
	if names["JWT_SECRET"] != "secret" || names["CURSOR_KEY"] != "secret" || strings.Count(names["NATS_URL"], "nats://") != NATSNodes {
		t.Errorf("the task's secrets and NATS_URL: %v", names)
	}
}
