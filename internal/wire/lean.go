package wire

import (
	"net"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Lean is a client option that takes out of every call's middleware stack
// what the server does not need, through the SDK's own stack API
// (APIOptions); each costs allocations on every DynamoDB call:
//
//   - ClientRequestID: a random invocation id header per call (for the SDK's
//     own metrics);
//   - UserAgent: the SDK's user-agent string, built for every call;
//   - RecursionDetection: reads the Lambda and X-Ray environment on every
//     call, to pass a trace header the server never has;
//   - RequestResponseLogger: logs wire traffic only with ClientLogMode,
//     which the server never sets.
//
// Retries, signing, credentials and endpoint resolution stay. Against a
// loopback endpoint (DynamoDB Local, dynalite, the embedded store) it also
// skips the CRC32 check of each response body: bytes that never leave the
// machine cannot be damaged on the way.
func Lean(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		for _, id := range []string{"ClientRequestID", "UserAgent", "RecursionDetection"} {
			if _, err := s.Build.Remove(id); err != nil {
				return err
			}
		}
		_, err := s.Deserialize.Remove("RequestResponseLogger")
		return err
	})
	if o.BaseEndpoint != nil && isLoopback(*o.BaseEndpoint) {
		o.DisableValidateResponseChecksum = true
	}
}

// isLoopback reports whether endpoint is a URL of this machine.
func isLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
