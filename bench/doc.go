// Package bench is taskgraph's performance harness: it runs the real server
// stack (a dynamo.Store with the server's client options behind
// web.NewHandler, requests through its http.Handler) against a DynamoDB
// endpoint, on a deterministic dataset at several scales, and measures a
// suite of named GraphQL operations (Suite): DynamoDB calls by type,
// sequential round trips (counted by a Gate in front of the SDK's HTTP
// client), the server's CPU time, latency, throughput, allocations and heap,
// with the loaders' batching on and off (the baseline).
//
// The embedded store runs in a child process (StartStoreProcess),
// so that the CPU time this process measures with getrusage is the server's
// (plus the small load driver's), not the store's.
//
// The tests of the package pin the calls and round trips of every suite
// operation on the 1× dataset (go test ./...). The report, which takes
// several minutes, runs only when asked for:
//
//	go test ./bench -run '^TestReport$' -v -timeout 30m -report
//
// The live-updates benchmark (TestLiveReport: delivery latency between two
// instances, DynamoDB calls per fanned-out event, 1,000 and 10,000
// subscribers, N/K for N over K projects) and the idle subscribers of the
// npm clients (TestLiveIdleFromOutside, node and npm ci needed) run only
// when asked for too:
//
//	go test ./bench -run '^TestLiveReport$' -v -timeout 30m -live -livesubs=5000,19000/4
//	go test ./bench -run '^TestLiveIdleFromOutside$' -v -timeout 30m -liveidle=5000,19000
//
// docs/performance.md gives the current figures; docs/performance-report.md
// explains the report and quotes a run.
package bench
