package wire

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

var errStop = errors.New("stop before sending")

// stackOf returns the middleware ids of a Query made with the server's
// client options for endpoint, and the options the client ended with.
func stackOf(t *testing.T, endpoint string) ([]string, dynamodb.Options) {
	t.Helper()
	var ids []string
	var final dynamodb.Options
	capture := func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			ids = append(ids, s.Initialize.List()...)
			ids = append(ids, s.Serialize.List()...)
			ids = append(ids, s.Build.List()...)
			ids = append(ids, s.Finalize.List()...)
			ids = append(ids, s.Deserialize.List()...)
			return errStop
		})
		final = *o
	}
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}, ClientOptions(capture)...)
	if _, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t")}); !errors.Is(err, errStop) {
		t.Fatalf("Query: %v, want the capture's stop", err)
	}
	return ids, final
}

func TestLeanKeepsWhatProductionNeeds(t *testing.T) {
	ids, _ := stackOf(t, "https://dynamodb.us-east-1.amazonaws.com")
	for _, gone := range []string{"ClientRequestID", "UserAgent", "RecursionDetection", "RequestResponseLogger"} {
		if slices.Contains(ids, gone) {
			t.Errorf("middleware %s is still in the stack %v", gone, ids)
		}
	}
	for _, kept := range []string{"Retry", "Signing", "GetIdentity", "ResolveEndpointV2", "ResolveAuthScheme", "OperationSerializer",
		"OperationDeserializer", "taskgraphDeadline", "taskgraphCountCalls"} {
		if !slices.Contains(ids, kept) {
			t.Errorf("middleware %s is missing from the stack %v", kept, ids)
		}
	}
}

func TestLeanChecksumsOnlyOffForLoopback(t *testing.T) {
	tests := []struct {
		endpoint string
		off      bool
	}{
		{"http://127.0.0.1:8000", true},
		{"http://localhost:8000", true},
		{"http://[::1]:8000", true},
		{"https://dynamodb.us-east-1.amazonaws.com", false},
		{"http://10.0.0.5:8000", false},
		{"http://localhost.example.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			if _, o := stackOf(t, tt.endpoint); o.DisableValidateResponseChecksum != tt.off {
				t.Errorf("DisableValidateResponseChecksum = %v, want %v", o.DisableValidateResponseChecksum, tt.off)
			}
		})
	}
}
