package web

import (
	"encoding/json"
	"net"
	"testing"
	"time"
)

// nextMessages reads the client's frames until none comes within a short
// while and returns their types.
func nextMessages(t *testing.T, client net.Conn) []string {
	t.Helper()
	var types []string
	for {
		_ = client.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		buf := make([]byte, 1<<16)
		n, err := client.Read(buf)
		if err != nil {
			return types
		}
		r := buf[:n]
		for len(r) > 0 { // the frames read at once
			p := readFrame(t, &sliceReader{&r})
			var m wsEnvelope
			if err := json.Unmarshal(p, &m); err != nil {
				t.Fatalf("frame %s: %v", p, err)
			}
			types = append(types, m.Type)
		}
	}
}

type sliceReader struct{ b *[]byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	n := copy(p, *s.b)
	*s.b = (*s.b)[n:]
	return n, nil
}

func TestAKeepAliveSkipsAConnectionSentAnEventSinceTheLast(t *testing.T) {
	for _, tc := range []struct {
		proto string
		want  [][]string // what the client gets at each step: idle, after an event, idle again
	}{
		{subprotocolTransportWS, [][]string{{"ping"}, {"next"}, {"ping"}}},
		// The legacy protocol's clients close a connection that misses a
		// ka, whatever else it is sent.
		{subprotocolGraphQLWS, [][]string{{"ka"}, {"next", "ka"}, {"ka"}}},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			server, client := tcpPair(t)
			c := &wsConn{proto: tc.proto, wire: wire{nc: server, limit: 16}}
			c.keepAlive(time.Now())
			if got := nextMessages(t, client); !same(got, tc.want[0]) {
				t.Fatalf("an idle connection got %v, want %v", got, tc.want[0])
			}
			c.sendMessage("next", "1", []byte(`{"data":{}}`), false)
			c.keepAlive(time.Now())
			if got := nextMessages(t, client); !same(got, tc.want[1]) {
				t.Fatalf("a connection sent an event got %v, want %v", got, tc.want[1])
			}
			c.keepAlive(time.Now())
			if got := nextMessages(t, client); !same(got, tc.want[2]) {
				t.Fatalf("a connection idle again got %v, want %v", got, tc.want[2])
			}
		})
	}
}

func TestAClientThatAnswersNoPingIsDropped(t *testing.T) {
	server, client := tcpPair(t)
	c := &wsConn{proto: subprotocolTransportWS, wire: wire{nc: server, limit: 16}}
	for i := range 2 {
		c.keepAlive(time.Now())
		if got := nextMessages(t, client); !same(got, []string{"ping"}) {
			t.Fatalf("keep-alive %d: the client got %v, want a ping", i+1, got)
		}
	}
	c.keepAlive(time.Now()) // none of the last two answered: the connection is dropped
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := client.Read(make([]byte, 16)); err == nil {
		t.Fatalf("the connection is still open (%d bytes read)", n)
	}
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
