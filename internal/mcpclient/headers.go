package mcpclient

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// ParamHeader is a tool parameter its server wants mirrored into an HTTP
// header (the x-mcp-header annotation of protocol 2026-07-28): the path of
// property names from the arguments object, and the header's name after
// Mcp-Param-.
type ParamHeader struct {
	Path   []string
	Header string
}

// paramHeaders reads the x-mcp-header annotations of a tool's input
// schema. An invalid one (on a non-primitive, empty, not a header token,
// or twice) is an error: the client must not offer such a tool.
func paramHeaders(name string, schema json.RawMessage) ([]ParamHeader, error) {
	if !bytes.Contains(schema, []byte("x-mcp-header")) {
		return nil, nil
	}
	tool := &mcp.Tool{Name: name, RawInputSchema: schema}
	if err := mcp.ValidateParamHeaderAnnotations(tool); err != nil {
		return nil, err
	}
	var out []ParamHeader
	for _, b := range mcp.ExtractParamHeaderBindings(tool) {
		out = append(out, ParamHeader{Path: b.Path, Header: b.Header})
	}
	slices.SortFunc(out, func(a, b ParamHeader) int { return strings.Compare(a.Header, b.Header) })
	return out, nil
}

// setParamHeaders sets on h the Mcp-Param-* header of each of bindings
// whose parameter args holds as a string, a boolean or an integer (a
// null or missing one is left out).
func setParamHeaders(h http.Header, bindings []ParamHeader, args json.RawMessage) {
	var top map[string]json.RawMessage
	if json.Unmarshal(args, &top) != nil {
		return
	}
	for _, b := range bindings {
		raw, ok := argumentAt(top, b.Path)
		if !ok {
			continue
		}
		v, ok := headerPrimitive(raw)
		if !ok {
			continue
		}
		if enc, ok := mcp.EncodeHeaderValue(v); ok {
			h[mcp.HeaderParamPrefix+b.Header] = []string{enc} // the name as the server wrote it
		}
	}
}

// argumentAt is the value at path in the arguments object.
func argumentAt(top map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	if len(path) == 0 {
		return nil, false
	}
	cur, ok := top[path[0]]
	for _, p := range path[1:] {
		if !ok {
			return nil, false
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		cur, ok = obj[p]
	}
	return cur, ok
}

// headerPrimitive decodes a value a header may carry: a string, a
// boolean, or an integer a double holds exactly.
func headerPrimitive(raw json.RawMessage) (any, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	switch x := v.(type) {
	case string, bool:
		return x, true
	case float64:
		const maxSafe = 1<<53 - 1
		if x != math.Trunc(x) || x > maxSafe || x < -maxSafe {
			return nil, false
		}
		return int64(x), true
	}
	return nil, false
}
