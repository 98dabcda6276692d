package stdio

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestEncodeRequestNames(t *testing.T) {
	for _, name := range []string{"echo", "weird.name/x", `quote"d`, "t\u00e9", "émoji 🔧", "<b>&"} {
		line, err := appendRequest(nil, &Request{ID: 3, Method: "tools/call", Tool: name, Args: json.RawMessage("{\"a\": 1}")})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			ID     int64 `json:"id"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(line, &got); err != nil || got.Params.Name != name || got.ID != 3 ||
			string(got.Params.Arguments) != `{"a": 1}` || bytes.Count(line, []byte("\n")) != 1 {
			t.Errorf("%q → %s (%v)", name, line, err)
		}
	}
}
