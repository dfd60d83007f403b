package app_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/app"
)

func TestNewStoreTakesTheClockAndLog(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := app.NewStore(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "t", nil, func() time.Time { return at })
	if got := s.Now(); !got.Equal(at) {
		t.Errorf("store clock = %v, want %v", got, at)
	}
	if s.Log == nil || s.Table() != "t" {
		t.Errorf("store log %v, table %q", s.Log, s.Table())
	}
}
