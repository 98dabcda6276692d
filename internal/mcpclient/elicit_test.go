package mcpclient

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseElicitForm(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []ElicitField // compared by Name, Kind, Required, Options, Default
		err    string        // in the error; the schema is refused
	}{
		{"empty object", `{"type":"object"}`, nil, ""},
		{"no properties", `{"type":"object","properties":{}}`, nil, ""},
		{"kinds in order", `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"},"m":{"type":"integer"},"b":{"type":"boolean"}},"required":["a"]}`,
			[]ElicitField{{Name: "z", Kind: FieldString}, {Name: "a", Kind: FieldNumber, Required: true}, {Name: "m", Kind: FieldInteger}, {Name: "b", Kind: FieldBoolean}}, ""},
		{"untitled enum", `{"type":"object","properties":{"c":{"type":"string","enum":["r","g"]}}}`,
			[]ElicitField{{Name: "c", Kind: FieldChoice, Options: []ElicitOption{{"r", "r"}, {"g", "g"}}}}, ""},
		{"legacy enumNames", `{"type":"object","properties":{"c":{"type":"string","enum":["r","g"],"enumNames":["Red"]}}}`,
			[]ElicitField{{Name: "c", Kind: FieldChoice, Options: []ElicitOption{{"r", "Red"}, {"g", "g"}}}}, ""},
		{"titled oneOf", `{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g"}]}}}`,
			[]ElicitField{{Name: "c", Kind: FieldChoice, Options: []ElicitOption{{"r", "Red"}, {"g", "g"}}}}, ""},
		{"multi select", `{"type":"object","properties":{"c":{"type":"array","items":{"type":"string","enum":["a","b"]},"default":["b"]}}}`,
			[]ElicitField{{Name: "c", Kind: FieldMultiChoice, Options: []ElicitOption{{"a", "a"}, {"b", "b"}}, Default: []string{"b"}}}, ""},
		{"titled multi select", `{"type":"object","properties":{"c":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}}}}`,
			[]ElicitField{{Name: "c", Kind: FieldMultiChoice, Options: []ElicitOption{{"a", "A"}}}}, ""},
		{"defaults", `{"type":"object","properties":{"s":{"type":"string","default":"x"},"n":{"type":"number","default":1.5},"i":{"type":"integer","default":3},"b":{"type":"boolean","default":true}}}`,
			[]ElicitField{{Name: "s", Default: "x"}, {Name: "n", Kind: FieldNumber, Default: 1.5}, {Name: "i", Kind: FieldInteger, Default: int64(3)}, {Name: "b", Kind: FieldBoolean, Default: true}}, ""},
		{"nested object", `{"type":"object","properties":{"a":{"type":"object","properties":{}}}}`, nil, `property "a": a nested object`},
		{"array of objects", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}}}`, nil, "not a multiple choice"},
		{"not an object", `{"type":"string"}`, nil, `type is "string"`},
		{"not JSON", `{`, nil, "not a JSON object"},
		{"missing", ``, nil, "missing"},
		{"no type", `{"type":"object","properties":{"a":{"description":"?"}}}`, nil, "no type"},
		{"type list", `{"type":"object","properties":{"a":{"type":["string","null"]}}}`, nil, "not one type name"},
		{"bad default", `{"type":"object","properties":{"a":{"type":"integer","default":"x"}}}`, nil, "default: not an integer"},
		{"default out of range", `{"type":"object","properties":{"a":{"type":"integer","minimum":5,"default":1}}}`, nil, "at least 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form, err := parseElicitForm(json.RawMessage(tt.schema))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []ElicitField
			for _, f := range form.Fields {
				got = append(got, ElicitField{Name: f.Name, Kind: f.Kind, Required: f.Required, Options: f.Options, Default: f.Default})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("fields\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestElicitFieldParseAnswer(t *testing.T) {
	five, two := 5.0, 2
	choice := ElicitField{Name: "c", Kind: FieldChoice, Options: []ElicitOption{{"r", "Red"}, {"g", "Green"}}}
	multi := choice
	multi.Kind, multi.MaxItems = FieldMultiChoice, &two
	tests := []struct {
		field ElicitField
		text  string
		want  any
		err   string
	}{
		{ElicitField{Kind: FieldString}, "  hello ", "hello", ""},
		{ElicitField{Kind: FieldString, MinLength: &two}, "a", nil, "at least 2 characters"},
		{ElicitField{Kind: FieldString, Format: "email"}, "ada@example.com", "ada@example.com", ""},
		{ElicitField{Kind: FieldString, Format: "email"}, "ada", nil, "not an email"},
		{ElicitField{Kind: FieldString, Format: "uri"}, "example.com", nil, "not a URL"},
		{ElicitField{Kind: FieldString, Format: "date"}, "2026-05-01", "2026-05-01", ""},
		{ElicitField{Kind: FieldString, Format: "date"}, "May 1st", nil, "not a date"},
		{ElicitField{Kind: FieldNumber}, "2,5", 2.5, ""},
		{ElicitField{Kind: FieldNumber, Maximum: &five}, "6", nil, "at most 5"},
		{ElicitField{Kind: FieldNumber}, "many", nil, "not a number"},
		{ElicitField{Kind: FieldInteger}, "42", int64(42), ""},
		{ElicitField{Kind: FieldInteger}, "4.2", nil, "whole number"},
		{ElicitField{Kind: FieldBoolean}, "Yes", true, ""},
		{ElicitField{Kind: FieldBoolean}, "no", false, ""},
		{ElicitField{Kind: FieldBoolean}, "maybe", nil, "yes or no"},
		{choice, "green", "g", ""},
		{choice, "r", "r", ""},
		{choice, "blue", nil, "choose one of: Red, Green"},
		{multi, "Red, g, red", []string{"r", "g"}, ""},
		{multi, "Red, blue", nil, `"blue" is not a choice`},
	}
	for _, tt := range tests {
		got, err := tt.field.ParseAnswer(tt.text)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseAnswer(%q) err = %v, want %q", tt.text, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseAnswer(%q) = %#v, %v; want %#v", tt.text, got, err, tt.want)
		}
	}
}

func TestElicitFormComplete(t *testing.T) {
	form, err := parseElicitForm(json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},` +
		`"age":{"type":"integer","default":30},"ok":{"type":"boolean"}},"required":["name"]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		content map[string]any
		want    map[string]any
		err     string
	}{
		{map[string]any{"name": "Ada"}, map[string]any{"name": "Ada", "age": int64(30)}, ""},
		{map[string]any{"name": "Ada", "age": int64(7), "ok": false}, map[string]any{"name": "Ada", "age": int64(7), "ok": false}, ""},
		{map[string]any{}, nil, "name is required"},
		{map[string]any{"name": "Ada", "age": "old"}, nil, "age: a number is expected"},
		{map[string]any{"name": "Ada", "shoe": 42}, nil, `"shoe" is not a field`},
	}
	for _, tt := range tests {
		got, err := form.complete(tt.content)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("complete(%v) err = %v, want %q", tt.content, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("complete(%v) = %v, %v; want %v", tt.content, got, err, tt.want)
		}
	}
}
