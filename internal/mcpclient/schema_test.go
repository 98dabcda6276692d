package mcpclient

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestModelSchema(t *testing.T) {
	const def = `{"type":"object"}`
	// A schema with keywords mcp-go's typed decoding drops, a nested
	// $schema, unicode and escapes, in an order no map would keep.
	const rich = `{"type":"object","properties":{"url":{"type":"string","description":"Adresse \"URL\" à ouvrir — 🌋\n\u00e9","$schema":"nested-kept"},` +
		`"mode":{"anyOf":[{"const":"a"},{"enum":["b","c\\d"]}]}},"required":["url"],"$defs":{"x":{"type":"null"}},"additionalProperties":false,"description":"z before a"}`
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"missing", "", def},
		{"null", "null", def},
		{"whitespace only", "  \n", def},
		{"array", `[{"type":"object"}]`, def},
		{"string", `"object"`, def},
		{"boolean schema", `true`, def},
		{"invalid json", `{"type":"object"`, def},
		{"trailing garbage", `{"type":"object"} x`, def},
		{"non-object type", `{"type":"string"}`, def},
		{"escaped non-object type", `{"t\u0079pe":"array","items":{}}`, def},
		{"verbatim rich", rich, rich},
		{"no type kept as is", `{"properties":{"a":{}}}`, `{"properties":{"a":{}}}`},
		{"type array kept", `{"type":["object","null"]}`, `{"type":["object","null"]}`},
		{"empty object kept", `{}`, `{}`},
		{"padded kept byte for byte", " {\n  \"type\" : \"object\" ,\"b\":1, \"a\":2 }\n", " {\n  \"type\" : \"object\" ,\"b\":1, \"a\":2 }\n"},
		{"$schema first", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{}}`, `{"type":"object","properties":{}}`},
		{"$schema middle", `{"type":"object","$schema":"s","properties":{}}`, `{"type":"object","properties":{}}`},
		{"$schema last", `{"type":"object","properties":{},"$schema":"s"}`, `{"type":"object","properties":{}}`},
		{"$schema only", `{"$schema":"s"}`, `{}`},
		{"$schema twice", `{"$schema":"s","a":1,"$schema":{"x":"}"}}`, `{"a":1}`},
		{"escaped $schema key", `{"\u0024schema":"s","type":"object"}`, `{"type":"object"}`},
		{"$schema with object value", `{"$schema":{"a":[1,{"b":"}]"}]},"type":"object"}`, `{"type":"object"}`},
		{"nested $schema kept", `{"$schema":"s","properties":{"p":{"$schema":"kept"}}}`, `{"properties":{"p":{"$schema":"kept"}}}`},
		{"$schema pretty-printed", "{\n  \"$schema\": \"s\",\n  \"type\": \"object\",\n  \"properties\": {}\n}",
			"{\n  \"type\": \"object\",\n  \"properties\": {}\n}"},
		{"$schema last pretty-printed", "{\n  \"type\": \"object\",\n  \"$schema\": \"s\"\n}", "{\n  \"type\": \"object\"\n}"},
		{"rich with $schema", strings.Replace(rich, `{"type":"object",`, `{"$schema":"x","type":"object",`, 1), rich},
		{"literals", `{"$schema":null,"a":true,"b":-1.5e3,"$schema":false,"c":[null]}`, `{"a":true,"b":-1.5e3,"c":[null]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in json.RawMessage
			if tt.in != "" {
				in = json.RawMessage(tt.in)
			}
			got := ModelSchema(in)
			if string(got) != tt.want {
				t.Errorf("ModelSchema(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			// The catalogue keeps $schema: only the model's copy drops it.
			if norm := NormalizeSchema(in); strings.Contains(tt.in, "$schema") && string(norm) != def && !strings.Contains(string(norm), "schema") {
				t.Errorf("NormalizeSchema(%s) = %s dropped $schema", tt.in, norm)
			}
			if !json.Valid(got) {
				t.Errorf("result %s is not valid JSON", got)
			}
		})
	}
}

func TestNormalizeSchemaDoesNotAliasDefault(t *testing.T) {
	a := NormalizeSchema(nil)
	a[2] = 'X'
	if b := NormalizeSchema(nil); string(b) != `{"type":"object"}` {
		t.Fatalf("default schema was shared and modified: %s", b)
	}
}

func FuzzModelSchema(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"$schema":"s","type":"object"}`, `{"a":{"$schema":1},"$schema":[1,"]"]}`, `[1]`, `{"\u0024schema":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got := ModelSchema(in)
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(got, &obj); err != nil {
			t.Fatalf("ModelSchema(%q) = %q: not a JSON object: %v", in, got, err)
		}
		if _, ok := obj["$schema"]; ok {
			t.Fatalf("ModelSchema(%q) = %q kept $schema", in, got)
		}
		var orig map[string]json.RawMessage
		if json.Unmarshal(in, &orig) == nil && orig != nil && string(got) != `{"type":"object"}` {
			delete(orig, "$schema")
			for k := range orig {
				if _, ok := obj[k]; !ok {
					t.Fatalf("ModelSchema(%q) = %q lost key %q", in, got, k)
				}
			}
		}
	})
}
