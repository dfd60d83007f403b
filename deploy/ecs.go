package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// The ECS task definition (ecs-task-definition.json): one taskgraph
// instance on Fargate, in the JSON that `aws ecs register-task-definition
// --cli-input-json` reads, built from the AWS SDK's own input type
// (ecs.RegisterTaskDefinitionInput), so that a field ECS does not have does
// not compile; ecs_test.go decodes the file strictly back into it. Run it
// as a service of Instances tasks behind a load balancer whose target
// group checks GET /healthz (docs/scaling.md); NATS_URL names the NATS
// cluster (three tasks with stable names, or a NATS service).

// Placeholders of the task definition, replaced by the team's.
const (
	ecsAccount = "111122223333"
	ecsRegion  = "eu-west-1"
)

func ecsTaskDefinition() *ecs.RegisterTaskDefinitionInput {
	arn := func(kind, name string) *string {
		return aws.String(fmt.Sprintf("arn:aws:%s:%s:%s:%s", kind, ecsRegion, ecsAccount, name))
	}
	var natsURLs []string
	for i := range NATSNodes {
		natsURLs = append(natsURLs, fmt.Sprintf("nats://nats-%d.taskgraph.local:4222", i))
	}
	env := func(k, v string) types.KeyValuePair {
		return types.KeyValuePair{Name: aws.String(k), Value: aws.String(v)}
	}
	return &ecs.RegisterTaskDefinitionInput{
		Family:                  aws.String("taskgraph"),
		NetworkMode:             types.NetworkModeAwsvpc,
		RequiresCompatibilities: []types.Compatibility{types.CompatibilityFargate},
		Cpu:                     aws.String("512"),
		Memory:                  aws.String("1024"), // GOMEMLIMIT: 75% of it
		RuntimePlatform:         &types.RuntimePlatform{CpuArchitecture: types.CPUArchitectureX8664, OperatingSystemFamily: types.OSFamilyLinux},
		ExecutionRoleArn:        aws.String("arn:aws:iam::" + ecsAccount + ":role/ecsTaskExecutionRole"),
		TaskRoleArn:             aws.String("arn:aws:iam::" + ecsAccount + ":role/taskgraph-server"), // with the stack's ServerPolicyArn
		ContainerDefinitions: []types.ContainerDefinition{{
			Name:      aws.String("taskgraph"),
			Image:     aws.String(Image),
			Essential: aws.Bool(true),
			Command:   []string{"-production", "-store=aws", "-create-table=false", fmt.Sprintf("-event-replicas=%d", NATSNodes)},
			PortMappings: []types.PortMapping{{ContainerPort: aws.Int32(8080), Protocol: types.TransportProtocolTcp, Name: aws.String("http")},
				{ContainerPort: aws.Int32(9090), Protocol: types.TransportProtocolTcp, Name: aws.String("metrics")}},
			Environment: []types.KeyValuePair{env("AWS_REGION", ecsRegion), env("TABLE_NAME", DefaultTableName),
				env("NATS_URL", strings.Join(natsURLs, ",")), env("METRICS_ADDR", ":9090")},
			Secrets: []types.Secret{{Name: aws.String("JWT_SECRET"), ValueFrom: arn("secretsmanager", "secret:taskgraph/jwt-secret")},
				{Name: aws.String("CURSOR_KEY"), ValueFrom: arn("secretsmanager", "secret:taskgraph/cursor-key")}},
			User:                   aws.String("65532:65532"),
			ReadonlyRootFilesystem: aws.Bool(true),
			StopTimeout:            aws.Int32(30), // the server's grace (15 s) and the subscriptions' end
			LogConfiguration: &types.LogConfiguration{LogDriver: types.LogDriverAwslogs, Options: map[string]string{
				"awslogs-group": "/ecs/taskgraph", "awslogs-region": ecsRegion, "awslogs-stream-prefix": "taskgraph", "awslogs-create-group": "true"}},
		}},
	}
}

// RenderECS returns the task definition as the CLI's JSON: the API's
// members (lowerCamelCase), unset ones left out.
func RenderECS() ([]byte, error) {
	j, err := json.Marshal(ecsTaskDefinition())
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(cliJSON(v), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// cliJSON renames the SDK's fields to the API's members and drops the
// unset ones (null, zero, empty). A map of strings (log options) keeps its
// keys.
func cliJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			e = cliJSON(e)
			if empty(e) {
				continue
			}
			if len(k) > 0 && unicode.IsUpper(rune(k[0])) {
				k = strings.ToLower(k[:1]) + k[1:]
			}
			out[k] = e
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = cliJSON(e)
		}
		return x
	}
	return v
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}
