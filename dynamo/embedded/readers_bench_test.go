//go:build unix

package embedded

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// BenchmarkReadersSideBySide measures reads through the SDK, one client
// and 16 at once, on a table of 100,000 items in 1,000 partitions: each
// read a Query of a page of 20 items of one partition. With writer, one
// more client writes (PutItem) all the while, as one writer at a time
// does. Reads share the engine; ops/s is reads a second, all clients
// together:
//
//	go test ./dynamo/embedded -run '^$' -bench ReadersSideBySide -benchtime 5s
func BenchmarkReadersSideBySide(b *testing.B) {
	e, err := Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	if _, err := e.call("CreateTable", map[string]any{"TableName": "t",
		"AttributeDefinitions": []map[string]string{{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}},
		"KeySchema":            []map[string]string{{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}},
		"BillingMode":          "PAY_PER_REQUEST"}); err != nil {
		b.Fatal(err)
	}
	const partitions, perPartition = 1000, 100
	var items [][]byte
	for p := range partitions {
		for k := range perPartition {
			items = append(items, fmt.Appendf(nil, `{"PK":{"S":"P#%04d"},"SK":{"S":"ITEM#%04d"},"title":{"S":"an item of some length, as a task's title is"},"n":{"N":"%d"}}`, p, k, k))
		}
	}
	if err := e.LoadItems("t", items); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, clients := range []int{1, 16} {
		for _, writer := range []bool{false, true} {
			b.Run(fmt.Sprintf("clients=%d/writer=%v", clients, writer), func(b *testing.B) {
				db := e.Client(client.Options()...) // the server's client: connections for 16 at once
				stop := make(chan struct{})
				var writes atomic.Int64
				var wg sync.WaitGroup
				if writer {
					wg.Go(func() {
						for i := 0; ; i++ {
							select {
							case <-stop:
								return
							default:
							}
							_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{
								"PK": &types.AttributeValueMemberS{Value: fmt.Sprintf("P#%04d", i%partitions)},
								"SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("ITEM#%04d", i%perPartition)},
								"n":  &types.AttributeValueMemberN{Value: fmt.Sprint(i)}}})
							if err != nil {
								b.Error(err)
								return
							}
							writes.Add(1)
						}
					})
				}
				var next atomic.Int64
				b.SetParallelism((clients + 1) / 2) // GOMAXPROCS 2 on this machine: 2 × that many goroutines
				if clients == 1 {
					b.SetParallelism(1)
				}
				b.ResetTimer()
				t0, c0 := time.Now(), cpuTime()
				run := func(pb interface{ Next() bool }) {
					for pb.Next() {
						p := next.Add(7919) % partitions
						out, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("t"), Limit: aws.Int32(20),
							KeyConditionExpression:    aws.String("PK = :p"),
							ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: fmt.Sprintf("P#%04d", p)}}})
						if err != nil || len(out.Items) != 20 {
							b.Errorf("Query: %d items, %v", len(out.Items), err)
							return
						}
					}
				}
				if clients == 1 {
					run(&serial{n: b.N})
				} else {
					b.RunParallel(func(pb *testing.PB) { run(pb) })
				}
				elapsed, cpu := time.Since(t0), cpuTime()-c0
				b.StopTimer()
				close(stop)
				wg.Wait()
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "reads/s")
				b.ReportMetric(cpu.Seconds()/elapsed.Seconds(), "cores")
				if writer {
					b.ReportMetric(float64(writes.Load())/elapsed.Seconds(), "writes/s")
				}
			})
		}
	}
}

// cpuTime is the process's CPU time so far (clients and store: one
// process), user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serial is a one-client loop of n iterations.
type serial struct{ n int }

func (s *serial) Next() bool {
	s.n--
	return s.n >= 0
}
