package testenv

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Readers of incremental answers (@defer), as the tests of graph's
// pipeline and of web's transports read them.

// The dashboard with its tasks deferred, per project, and the same query
// without @defer.
const (
	DeferDashboard = `query Dashboard { me { name projects(first: 10) { nodes { name
		members { role user { name } }
		... @defer(label: "tasks") { tasks(first: 5) { nodes { title assignee { name } tags { name }
			comments(first: 5) { nodes { body author { name } } } } } } } } } }`
	PlainDashboard = `query Dashboard { me { name projects(first: 10) { nodes { name
		members { role user { name } }
		tasks(first: 5) { nodes { title assignee { name } tags { name }
			comments(first: 5) { nodes { body author { name } } } } } } } } }`
)

// DeferPart is one part of an incremental answer: the initial one (data),
// or later ones (incremental), in either format multipart/mixed serves.
type DeferPart struct {
	Data        json.RawMessage   `json:"data"`
	Errors      []Error           `json:"errors"`
	Extensions  map[string]any    `json:"extensions"`
	HasNext     *bool             `json:"hasNext"`
	Incremental []IncrementalItem `json:"incremental"`
	// SSE and WebSocket parts carry one deferred fragment each, unwrapped.
	Path  []any  `json:"path"`
	Label string `json:"label"`
	// graphql-js 17's format (incrementalSpec=v0.2): the fragments
	// announced, and those completed, by id.
	Pending   []PendingItem   `json:"pending"`
	Completed []CompletedItem `json:"completed"`
}

type IncrementalItem struct {
	Data   json.RawMessage `json:"data"`
	Errors []Error         `json:"errors"`
	Path   []any           `json:"path"`
	Label  string          `json:"label"`
	// incrementalSpec=v0.2: the pending fragment's id, and where below its
	// path the data goes.
	ID      string `json:"id"`
	SubPath []any  `json:"subPath"`
}

type PendingItem struct {
	ID    string `json:"id"`
	Path  []any  `json:"path"`
	Label string `json:"label"`
}

type CompletedItem struct {
	ID     string  `json:"id"`
	Errors []Error `json:"errors"`
}

// MultipartFormat is the format a multipart/mixed answer names in its
// Content-Type: "deferSpec=20220824" or "incrementalSpec=v0.2" ("" for
// another media type or neither).
func MultipartFormat(contentType string) string {
	mt, params, err := mime.ParseMediaType(contentType)
	switch {
	case err != nil || mt != "multipart/mixed":
		return ""
	case params["deferspec"] == "20220824":
		return "deferSpec=20220824"
	case params["incrementalspec"] == "v0.2":
		return "incrementalSpec=v0.2"
	}
	return ""
}

// MultipartParts reads a multipart/mixed answer's parts.
func MultipartParts(tb testing.TB, contentType string, body io.Reader) []DeferPart {
	tb.Helper()
	_, params, _ := mime.ParseMediaType(contentType)
	if MultipartFormat(contentType) == "" {
		tb.Fatalf("Content-Type %q, want multipart/mixed;deferSpec=20220824 or multipart/mixed;incrementalSpec=v0.2", contentType)
	}
	r := multipart.NewReader(body, params["boundary"])
	var parts []DeferPart
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			return parts
		}
		if err != nil {
			tb.Fatalf("reading part %d: %v", len(parts)+1, err)
		}
		b, _ := io.ReadAll(p)
		var d DeferPart
		if err := json.Unmarshal(b, &d); err != nil {
			tb.Fatalf("part %d is not JSON: %q", len(parts)+1, b)
		}
		parts = append(parts, d)
	}
}

// MergeParts applies every later part to the initial part's data, as a
// client does, and returns the result: an incremental item at its path,
// or at the path its id was announced with, then its subPath
// (incrementalSpec=v0.2); a part whose data is null (a fragment that
// failed) changes nothing.
func MergeParts(tb testing.TB, parts []DeferPart) any {
	tb.Helper()
	var data any
	if err := json.Unmarshal(parts[0].Data, &data); err != nil {
		tb.Fatal(err)
	}
	apply := func(path []any, raw json.RawMessage) {
		var at any = data
		for _, k := range path {
			switch k := k.(type) {
			case string:
				m, _ := at.(map[string]any)
				at = m[k]
			case float64:
				l, _ := at.([]any)
				if int(k) >= len(l) {
					at = nil
					continue
				}
				at = l[int(k)]
			}
		}
		var add map[string]any
		if err := json.Unmarshal(raw, &add); err != nil {
			tb.Fatal(err)
		}
		if add == nil {
			return
		}
		obj, ok := at.(map[string]any)
		if !ok {
			tb.Fatalf("a part at %v, where the data so far has no object: %s", path, raw)
		}
		deepMerge(obj, add)
	}
	pending := map[string][]any{}
	for _, p := range parts {
		for _, pe := range p.Pending {
			pending[pe.ID] = pe.Path
		}
	}
	for _, p := range parts[1:] {
		if p.Path != nil {
			apply(p.Path, p.Data)
		}
		for _, inc := range p.Incremental {
			path := inc.Path
			if inc.ID != "" {
				path = append(slices.Clone(pending[inc.ID]), inc.SubPath...)
			}
			apply(path, inc.Data)
		}
	}
	return data
}

// deepMerge merges add into dst: objects field by field, lists item by
// item, anything else replaced (a client's merge of a later part).
func deepMerge(dst, add map[string]any) {
	for k, v := range add {
		dst[k] = mergedValue(dst[k], v)
	}
}

func mergedValue(old, v any) any {
	switch v := v.(type) {
	case map[string]any:
		if o, ok := old.(map[string]any); ok {
			deepMerge(o, v)
			return o
		}
	case []any:
		if o, ok := old.([]any); ok && len(o) == len(v) {
			for i := range v {
				o[i] = mergedValue(o[i], v[i])
			}
			return o
		}
	}
	return v
}

// CheckDeferred checks an incremental answer: the initial part has no
// task, hasNext true until the last part, no error, and the merged data
// equal to want. Every fragment is labelled "tasks" (or "comments",
// inside it). In graphql-js 17's format, each is announced before or with
// its data, under an id of its own, and completed once, with its data.
var deferLabels = map[string]bool{"tasks": true, "comments": true}

func CheckDeferred(tb testing.TB, parts []DeferPart, want any) {
	tb.Helper()
	if len(parts) < 2 {
		tb.Fatalf("%d parts, want the initial one and at least one more: %+v", len(parts), parts)
	}
	if strings.Contains(string(parts[0].Data), `"title"`) || !strings.Contains(string(parts[0].Data), `"members"`) {
		tb.Errorf("the initial part has deferred tasks or lacks the members: %s", parts[0].Data)
	}
	announced, delivered, completed := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i, p := range parts {
		last := i == len(parts)-1
		if p.HasNext == nil || *p.HasNext == last {
			tb.Errorf("part %d of %d: hasNext %v", i+1, len(parts), p.HasNext)
		}
		if len(p.Errors) > 0 {
			tb.Errorf("part %d: errors %+v", i+1, p.Errors)
		}
		for _, pe := range p.Pending {
			if announced[pe.ID] || !deferLabels[pe.Label] {
				tb.Errorf("part %d: pending %+v (announced before: %v)", i+1, pe, announced[pe.ID])
			}
			announced[pe.ID] = true
		}
		for _, inc := range p.Incremental {
			label := inc.Label
			if inc.ID != "" {
				label = "tasks" // its pending's label, checked above
				if !announced[inc.ID] || delivered[inc.ID] || completed[inc.ID] {
					tb.Errorf("part %d: incremental %s not announced, or delivered twice, or after its completion", i+1, inc.ID)
				}
				delivered[inc.ID] = true
			}
			if len(inc.Errors) > 0 || !deferLabels[label] {
				tb.Errorf("part %d: %+v", i+1, inc)
			}
		}
		for _, c := range p.Completed {
			if !announced[c.ID] || completed[c.ID] || !delivered[c.ID] || len(c.Errors) > 0 {
				tb.Errorf("part %d: completed %+v (announced %v, delivered %v, completed before %v)", i+1, c, announced[c.ID], delivered[c.ID], completed[c.ID])
			}
			completed[c.ID] = true
		}
	}
	if len(announced) != len(completed) {
		tb.Errorf("%d fragments announced, %d completed", len(announced), len(completed))
	}
	if got := MergeParts(tb, parts); !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		tb.Errorf("merged parts:\n%s\nwant the query without @defer:\n%s", g, w)
	}
}

// SSEParts reads the next events of a text/event-stream answer
// (graphql-sse's distinct connections mode) as parts.
func SSEParts(tb testing.TB, body []byte) []DeferPart {
	tb.Helper()
	var parts []DeferPart
	for _, event := range strings.Split(string(body), "\n\n") {
		lines := strings.Split(strings.TrimSpace(event), "\n")
		if len(lines) != 2 || lines[0] != "event: next" || !strings.HasPrefix(lines[1], "data: ") {
			continue
		}
		var d DeferPart
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &d); err != nil {
			tb.Fatalf("event %d is not JSON: %q", len(parts)+1, lines[1])
		}
		parts = append(parts, d)
	}
	return parts
}
