// The client checks: Apollo Client, urql's graphcache and Relay, each with
// its configuration from clients/, and @defer with Apollo's two handlers
// and urql (defer.ts), against a real server instance. Run by
// TestFrontendClients (frontends_clients_test.go), which compiles this directory
// with tsc, starts the instance and passes LIVE_CONFIG (harness.ts); each
// check is a subtest there.
import './apollo';
import './urql';
import './relay';
import './defer';
import { run } from './harness';

void run();
