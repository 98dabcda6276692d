package fakemcp

import (
	"encoding/json"
	"slices"
	"testing"
)

// The many-tools catalogue has its advertised size, names that are unique
// and schemas that are valid JSON objects.
func TestManyTools(t *testing.T) {
	tools := manyServerTools()
	if len(tools) != ManyToolsCount {
		t.Fatalf("%d tools, want %d", len(tools), ManyToolsCount)
	}
	names := ManyToolNames()
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
		t.Errorf("duplicate names in %v", names)
	}
	bytes := 0
	for _, st := range tools {
		var schema map[string]any
		if err := json.Unmarshal(st.Tool.RawInputSchema, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema %s: %v", st.Tool.Name, st.Tool.RawInputSchema, err)
		}
		bytes += len(st.Tool.Name) + len(st.Tool.Description) + len(st.Tool.RawInputSchema)
	}
	t.Logf("%d bytes of names, descriptions and schemas", bytes)
	if got := ToolNames(ModeManyTools); len(got) != ManyToolsCount {
		t.Errorf("ToolNames(many-tools) has %d names", len(got))
	}
}
