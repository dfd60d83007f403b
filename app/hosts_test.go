package app

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"testing"
)

// The Host rule alone, by configuration: which names pass.
func TestHostCheckAllowsTheServersNamesOnly(t *testing.T) {
	machine, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	loopbackNames := []string{"localhost", "localhost:8080", "LocalHost.", "127.0.0.1", "127.0.0.1:8080", "[::1]", "[::1]:8080"}
	rebinding := []string{"evil.example", "evil.example:8080", "localhost.evil.example", "127.0.0.1.nip.io:8080",
		"dev.example.test.evil.example", "evildev.example.test", "sub.localhost", ""}
	for _, tc := range []struct {
		name            string
		production      bool
		list, listen    string
		allowed, refuse []string
	}{
		{name: "development: loopback names, IP addresses and the machine's name", listen: "127.0.0.1:8080",
			allowed: append([]string{"192.168.1.5:8080", "[fe80::1]:8080", machine, strings.ToUpper(machine) + ":8080"}, loopbackNames...),
			refuse:  rebinding},
		{name: "development: the listening name", listen: "devbox.lan:8080",
			allowed: []string{"devbox.lan:8080", "localhost:8080"}, refuse: rebinding},
		{name: "development with -allowed-hosts: its names and domains too", list: " dev.example.test , .corp.example", listen: "0.0.0.0:8080",
			allowed: append([]string{"dev.example.test", "DEV.example.test:8080", "corp.example", "a.b.corp.example:443"}, loopbackNames...),
			refuse:  append([]string{"evilcorp.example", "corp.example.evil.example"}, rebinding...)},
		{name: "development with -allowed-hosts=*: any", list: "*", allowed: append(rebinding[:len(rebinding)-1], loopbackNames...)},
		{name: "production: any, behind a load balancer", production: true, listen: ":8080",
			allowed: append(rebinding[:len(rebinding)-1], loopbackNames...)},
		{name: "production with -allowed-hosts: its names, loopback and IP addresses", production: true, list: "api.example.test", listen: ":8080",
			allowed: append([]string{"api.example.test", "10.0.3.7:8080"}, loopbackNames...), refuse: rebinding},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newHostCheck(tc.production, tc.list, tc.listen, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tc.allowed {
				if !c.allows(h) {
					t.Errorf("Host %q refused", h)
				}
			}
			for _, h := range tc.refuse {
				if c.allows(h) {
					t.Errorf("Host %q allowed", h)
				}
			}
		})
	}
	t.Run("an entry that is no host name stops the start", func(t *testing.T) {
		for _, bad := range []string{"http://dev.example.test", "dev.example.test:8080", "*.example.test", "dev example", "dev.example.test/x", "a..b"} {
			if _, err := newHostCheck(false, "ok.example.test,"+bad, "", nil); err == nil || !strings.Contains(err.Error(), "-allowed-hosts") {
				t.Errorf("-allowed-hosts %q: %v", bad, err)
			}
		}
	})
}

// Without -addr, a development server listens on 127.0.0.1 (HOST and PORT
// change it); a production one on every interface, behind its load
// balancer (e2e/hosts_test.go starts both).
func TestTheDefaultAddressIsLoopback(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"development: loopback", nil, nil, "127.0.0.1:8080"},
		{"production: every interface", nil, []string{"-production"}, ":8080"},
		{"HOST opens it", map[string]string{"HOST": "0.0.0.0"}, nil, "0.0.0.0:8080"},
		{"HOST in IPv6", map[string]string{"HOST": "[::1]"}, nil, "[::1]:8080"},
		{"PORT moves it", map[string]string{"PORT": "9000"}, nil, "127.0.0.1:9000"},
		{"-addr wins", map[string]string{"HOST": "0.0.0.0"}, []string{"-addr=127.0.0.1:7000"}, "127.0.0.1:7000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Env{"PORT": "8080"}
			for k, v := range tc.env {
				env[k] = v
			}
			s, err := LoadConfig(tc.args, env, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if s.Addr != tc.want {
				t.Fatalf("addr = %q, want %q", s.Addr, tc.want)
			}
		})
	}
	t.Run("an -addr that is no host:port stops the start", func(t *testing.T) {
		if _, err := LoadConfig([]string{"-addr=8080"}, Env{}, io.Discard); err == nil || !strings.Contains(err.Error(), "-addr") {
			t.Fatalf("-addr=8080: %v", err)
		}
	})
	t.Run("-h names the flags and variables", func(t *testing.T) {
		var out bytes.Buffer
		if _, err := LoadConfig([]string{"-h"}, Env{}, &out); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("-h: %v", err)
		}
		for _, want := range []string{"-addr", "HOST", "127.0.0.1:8080", "-allowed-hosts", "ALLOWED_HOSTS"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("-h does not mention %q", want)
			}
		}
	})
}
