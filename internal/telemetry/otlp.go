package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// otlpExporter exports spans over OTLP/HTTP with protobuf, the
// specification's default protocol: one POST of an
// ExportTraceServiceRequest to <endpoint>/v1/traces per batch. It stands in
// for the SDK's otlptracehttp exporter, whose configuration package
// imports gRPC (66 packages, for TLS settings types): that cost some 5% of
// a cold build and of the binary for nothing gRPC does here. It reads the
// specification's variables: OTEL_EXPORTER_OTLP[_TRACES]_ENDPOINT,
// _HEADERS, _TIMEOUT, _COMPRESSION (gzip, none), _CERTIFICATE,
// _CLIENT_CERTIFICATE and _CLIENT_KEY; a response of 429, 502, 503 or 504
// is retried (Retry-After honoured) until the batch's time is up.
type otlpExporter struct {
	url     string
	headers map[string]string
	timeout time.Duration
	gzip    bool
	client  *http.Client
}

// otlpEnv returns the traces-specific variable, else the general one.
func otlpEnv(env func(string) string, name string) string {
	if v := env("OTEL_EXPORTER_OTLP_TRACES_" + name); v != "" {
		return v
	}
	return env("OTEL_EXPORTER_OTLP_" + name)
}

func newOTLPExporter(env func(string) string) (*otlpExporter, error) {
	e := &otlpExporter{url: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), headers: map[string]string{}, timeout: 10 * time.Second}
	if e.url == "" {
		base := env("OTEL_EXPORTER_OTLP_ENDPOINT")
		if base == "" {
			base = "http://localhost:4318"
		}
		e.url = strings.TrimSuffix(base, "/") + "/v1/traces"
	}
	if u, err := url.Parse(e.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT %q: want an http or https URL", e.url)
	}
	for _, kv := range strings.Split(otlpEnv(env, "HEADERS"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if dv, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
			e.headers[strings.TrimSpace(k)] = dv
		}
	}
	if ms := otlpEnv(env, "TIMEOUT"); ms != "" {
		n, err := strconv.Atoi(ms)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT %q: want milliseconds", ms)
		}
		e.timeout = time.Duration(n) * time.Millisecond
	}
	switch c := otlpEnv(env, "COMPRESSION"); c {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION %q: want gzip or none", c)
	}
	tlsConf, err := otlpTLS(env)
	if err != nil {
		return nil, err
	}
	e.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsConf, MaxIdleConns: 2}}
	return e, nil
}

// otlpTLS reads the certificate variables (nil: the system's roots).
func otlpTLS(env func(string) string) (*tls.Config, error) {
	ca, cert, key := otlpEnv(env, "CERTIFICATE"), otlpEnv(env, "CLIENT_CERTIFICATE"), otlpEnv(env, "CLIENT_KEY")
	if ca == "" && cert == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE %s: no PEM certificate", ca)
		}
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// ExportSpans sends one batch.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := exportRequest(spans)
	if err != nil {
		return err
	}
	if e.gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = b.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	for wait := 100 * time.Millisecond; ; wait *= 2 {
		retry, err := e.post(ctx, body)
		if retry <= 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("exporting spans: %w (after %v)", ctx.Err(), err)
		case <-time.After(max(wait, retry)):
		}
	}
}

// post sends body once; retry is how long to wait before trying again
// (0: done, with err).
func (e *otlpExporter) post(ctx context.Context, body []byte) (retry time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	res, err := e.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("exporting spans: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return 0, nil
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusBadGateway ||
		res.StatusCode == http.StatusServiceUnavailable || res.StatusCode == http.StatusGatewayTimeout:
		after, _ := strconv.Atoi(res.Header.Get("Retry-After"))
		return max(time.Duration(after)*time.Second, time.Millisecond), fmt.Errorf("exporting spans: %s", res.Status)
	}
	return 0, fmt.Errorf("exporting spans: the collector answered %s", res.Status)
}

// Shutdown closes idle connections; nothing is buffered here (the batch
// span processor flushes before it).
func (e *otlpExporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

// exportRequest encodes an ExportTraceServiceRequest (field 1: repeated
// ResourceSpans) of spans, grouped by resource and instrumentation scope.
func exportRequest(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	type scopeKey struct{ name, version, schema string }
	var out []byte
	byRes := map[attribute.Distinct]*tracepb.ResourceSpans{}
	var order []*tracepb.ResourceSpans
	scopes := map[*tracepb.ResourceSpans]map[scopeKey]*tracepb.ScopeSpans{}
	for _, s := range spans {
		res := s.Resource()
		rs := byRes[res.Equivalent()]
		if rs == nil {
			rs = &tracepb.ResourceSpans{Resource: &resourcepb.Resource{Attributes: keyValues(res.Attributes())}, SchemaUrl: res.SchemaURL()}
			byRes[res.Equivalent()], scopes[rs] = rs, map[scopeKey]*tracepb.ScopeSpans{}
			order = append(order, rs)
		}
		is := s.InstrumentationScope()
		k := scopeKey{is.Name, is.Version, is.SchemaURL}
		ss := scopes[rs][k]
		if ss == nil {
			ss = &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: is.Name, Version: is.Version}, SchemaUrl: is.SchemaURL}
			scopes[rs][k] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, spanOf(s))
	}
	for _, rs := range order {
		b, err := proto.Marshal(rs)
		if err != nil {
			return nil, err
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return out, nil
}

func spanOf(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	p := &tracepb.Span{TraceId: tid[:], SpanId: sid[:], TraceState: sc.TraceState().String(), Name: s.Name(),
		Kind: tracepb.Span_SpanKind(s.SpanKind()), StartTimeUnixNano: uint64(s.StartTime().UnixNano()),
		EndTimeUnixNano: uint64(s.EndTime().UnixNano()), Attributes: keyValues(s.Attributes()),
		DroppedAttributesCount: uint32(s.DroppedAttributes()), DroppedEventsCount: uint32(s.DroppedEvents()),
		DroppedLinksCount: uint32(s.DroppedLinks()), Flags: uint32(sc.TraceFlags()) | 0x100} // 0x100: whether the parent is remote is known
	if parent.IsValid() {
		ps := parent.SpanID()
		p.ParentSpanId = ps[:]
		if parent.IsRemote() {
			p.Flags |= 0x200
		}
	}
	switch s.Status().Code {
	case codes.Ok:
		p.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	case codes.Error:
		p.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: s.Status().Description}
	}
	for _, ev := range s.Events() {
		p.Events = append(p.Events, &tracepb.Span_Event{TimeUnixNano: uint64(ev.Time.UnixNano()), Name: ev.Name,
			Attributes: keyValues(ev.Attributes), DroppedAttributesCount: uint32(ev.DroppedAttributeCount)})
	}
	for _, l := range s.Links() {
		lt, ls := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		p.Links = append(p.Links, &tracepb.Span_Link{TraceId: lt[:], SpanId: ls[:], TraceState: l.SpanContext.TraceState().String(),
			Attributes: keyValues(l.Attributes), DroppedAttributesCount: uint32(l.DroppedAttributeCount)})
	}
	return p
}

func keyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

func anyValue(v attribute.Value) *commonpb.AnyValue {
	list := func(n int, at func(i int) *commonpb.AnyValue) *commonpb.AnyValue {
		vs := make([]*commonpb.AnyValue, n)
		for i := range vs {
			vs[i] = at(i)
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
	}
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.BOOLSLICE:
		s := v.AsBoolSlice()
		return list(len(s), func(i int) *commonpb.AnyValue { return anyValue(attribute.BoolValue(s[i])) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return list(len(s), func(i int) *commonpb.AnyValue { return anyValue(attribute.Int64Value(s[i])) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return list(len(s), func(i int) *commonpb.AnyValue { return anyValue(attribute.Float64Value(s[i])) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return list(len(s), func(i int) *commonpb.AnyValue { return anyValue(attribute.StringValue(s[i])) })
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.Emit()}}
}

var _ sdktrace.SpanExporter = (*otlpExporter)(nil)

// errGRPC refuses OTLP over gRPC, which is not built in.
var errGRPC = errors.New("OTEL_EXPORTER_OTLP_PROTOCOL grpc: this server exports traces over OTLP/HTTP only; " +
	"set http/protobuf (or leave it unset) and point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP port (4318 by default)")
