package mcpclient

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The model gets a result's structuredContent when its text does not
// already carry it. go-sdk's memory server answers read_graph with the
// text "Graph read successfully" and the graph as structuredContent: the
// model saw only the placeholder.
func TestStructuredContentReachesTheModel(t *testing.T) {
	const graph = `{"entities":[{"name":"Alice","entityType":"person","observations":["likes tea"]}],"relations":[]}`
	tests := []struct {
		name  string
		raw   string
		wants []string // in the model's text
		once  string   // appears exactly once
	}{
		{"a placeholder text", `{"content":[{"type":"text","text":"Graph read successfully"}],"structuredContent":` + graph + `}`,
			[]string{"Graph read successfully", `"name":"Alice"`, `"likes tea"`}, ""},
		{"the text is the JSON", `{"content":[{"type":"text","text":` + quote(graph) + `}],"structuredContent":` + graph + `}`,
			nil, `"likes tea"`},
		{"the text is the JSON, spaced and reordered", `{"content":[{"type":"text","text":` +
			quote("{\n  \"relations\": [],\n  \"entities\": [{\"observations\": [\"likes tea\"], \"entityType\": \"person\", \"name\": \"Alice\"}]\n}") +
			`}],"structuredContent":` + graph + `}`, nil, `likes tea`},
		{"the text says every value", `{"content":[{"type":"text","text":"Alice (person): likes tea"}],"structuredContent":` + graph + `}`,
			nil, `likes tea`},
		{"an error's text", `{"isError":true,"content":[{"type":"text","text":"failed"}],"structuredContent":{"code":"E_NOPE"}}`,
			[]string{"failed", `E_NOPE`}, ""},
		{"null", `{"content":[{"type":"text","text":"done"}],"structuredContent":null}`, []string{"done"}, "done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := MapResult("memory", "read_graph", json.RawMessage(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			text := res.Text()
			for _, want := range tt.wants {
				if !strings.Contains(text, want) {
					t.Errorf("the model's text %q lacks %q", text, want)
				}
			}
			if tt.once != "" && strings.Count(text, tt.once) != 1 {
				t.Errorf("%q %d times in %q: the text carried it already", tt.once, strings.Count(text, tt.once), text)
			}
		})
	}
}

// The structured content added counts toward the result's cap like any
// text: a large one is cut, the result says so.
func TestStructuredContentWithinTheCap(t *testing.T) {
	var items []string
	for i := range 2000 {
		items = append(items, fmt.Sprintf(`{"id":%d,"v":"value number %d"}`, i, i))
	}
	raw := `{"content":[{"type":"text","text":"ok"}],"structuredContent":{"items":[` + strings.Join(items, ",") + `]}}`
	lim := resultLimits{bytes: 4096, image: MaxImageBytes}
	res, err := mapResult("s", "t", json.RawMessage(raw), lim, false)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Text()) > 4096+512 || !strings.Contains(res.Text(), `"value number 1"`) {
		t.Errorf("truncated %v, %d bytes: %.200q", res.Truncated, len(res.Text()), res.Text())
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
