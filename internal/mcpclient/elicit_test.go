package mcpclient

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

func TestParseElicitForm(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []chat.ElicitField // compared by Name, Kind, Required, Options, Default
		err    string             // in the error; the schema is refused
	}{
		{"empty object", `{"type":"object"}`, nil, ""},
		{"no properties", `{"type":"object","properties":{}}`, nil, ""},
		{"kinds in order", `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"},"m":{"type":"integer"},"b":{"type":"boolean"}},"required":["a"]}`,
			[]chat.ElicitField{{Name: "z", Kind: chat.FieldString}, {Name: "a", Kind: chat.FieldNumber, Required: true}, {Name: "m", Kind: chat.FieldInteger}, {Name: "b", Kind: chat.FieldBoolean}}, ""},
		{"untitled enum", `{"type":"object","properties":{"c":{"type":"string","enum":["r","g"]}}}`,
			[]chat.ElicitField{{Name: "c", Kind: chat.FieldChoice, Options: []chat.ElicitOption{{Value: "r", Label: "r"}, {Value: "g", Label: "g"}}}}, ""},
		{"legacy enumNames", `{"type":"object","properties":{"c":{"type":"string","enum":["r","g"],"enumNames":["Red"]}}}`,
			[]chat.ElicitField{{Name: "c", Kind: chat.FieldChoice, Options: []chat.ElicitOption{{Value: "r", Label: "Red"}, {Value: "g", Label: "g"}}}}, ""},
		{"titled oneOf", `{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g"}]}}}`,
			[]chat.ElicitField{{Name: "c", Kind: chat.FieldChoice, Options: []chat.ElicitOption{{Value: "r", Label: "Red"}, {Value: "g", Label: "g"}}}}, ""},
		{"multi select", `{"type":"object","properties":{"c":{"type":"array","items":{"type":"string","enum":["a","b"]},"default":["b"]}}}`,
			[]chat.ElicitField{{Name: "c", Kind: chat.FieldMultiChoice, Options: []chat.ElicitOption{{Value: "a", Label: "a"}, {Value: "b", Label: "b"}}, Default: []string{"b"}}}, ""},
		{"titled multi select", `{"type":"object","properties":{"c":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}}}}`,
			[]chat.ElicitField{{Name: "c", Kind: chat.FieldMultiChoice, Options: []chat.ElicitOption{{Value: "a", Label: "A"}}}}, ""},
		{"defaults", `{"type":"object","properties":{"s":{"type":"string","default":"x"},"n":{"type":"number","default":1.5},"i":{"type":"integer","default":3},"b":{"type":"boolean","default":true}}}`,
			[]chat.ElicitField{{Name: "s", Default: "x"}, {Name: "n", Kind: chat.FieldNumber, Default: 1.5}, {Name: "i", Kind: chat.FieldInteger, Default: int64(3)}, {Name: "b", Kind: chat.FieldBoolean, Default: true}}, ""},
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
			var got []chat.ElicitField
			for _, f := range form.Fields {
				got = append(got, chat.ElicitField{Name: f.Name, Kind: f.Kind, Required: f.Required, Options: f.Options, Default: f.Default})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("fields\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestElicitFieldParseAnswer(t *testing.T) {
	five, two := 5.0, 2
	choice := chat.ElicitField{Name: "c", Kind: chat.FieldChoice, Options: []chat.ElicitOption{{Value: "r", Label: "Red"}, {Value: "g", Label: "Green"}}}
	multi := choice
	multi.Kind, multi.MaxItems = chat.FieldMultiChoice, &two
	tests := []struct {
		field chat.ElicitField
		text  string
		want  any
		err   string
	}{
		{chat.ElicitField{Kind: chat.FieldString}, "  hello ", "hello", ""},
		{chat.ElicitField{Kind: chat.FieldString, MinLength: &two}, "a", nil, "at least 2 characters"},
		{chat.ElicitField{Kind: chat.FieldString, Format: "email"}, "ada@example.com", "ada@example.com", ""},
		{chat.ElicitField{Kind: chat.FieldString, Format: "email"}, "ada", nil, "not an email"},
		{chat.ElicitField{Kind: chat.FieldString, Format: "uri"}, "example.com", nil, "not a URL"},
		{chat.ElicitField{Kind: chat.FieldString, Format: "date"}, "2026-05-01", "2026-05-01", ""},
		{chat.ElicitField{Kind: chat.FieldString, Format: "date"}, "May 1st", nil, "not a date"},
		{chat.ElicitField{Kind: chat.FieldNumber}, "2,5", 2.5, ""},
		{chat.ElicitField{Kind: chat.FieldNumber, Maximum: &five}, "6", nil, "at most 5"},
		{chat.ElicitField{Kind: chat.FieldNumber}, "many", nil, "not a number"},
		{chat.ElicitField{Kind: chat.FieldInteger}, "42", int64(42), ""},
		{chat.ElicitField{Kind: chat.FieldInteger}, "4.2", nil, "whole number"},
		{chat.ElicitField{Kind: chat.FieldBoolean}, "Yes", true, ""},
		{chat.ElicitField{Kind: chat.FieldBoolean}, "no", false, ""},
		{chat.ElicitField{Kind: chat.FieldBoolean}, "maybe", nil, "yes or no"},
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
		got, err := form.Complete(tt.content)
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
