package mcpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/jsonscan"
)

// errUnrenderable is a requested schema the client cannot ask: it is
// refused with a reason, never left unanswered.
type errUnrenderable struct{ reason string }

func (e *errUnrenderable) Error() string { return "requestedSchema: " + e.reason }

// parseElicitForm reads a requested schema: an object whose properties
// are primitives (string, number, integer, boolean, single- and
// multiple-choice enums).
func parseElicitForm(raw json.RawMessage) (chat.ElicitFormSpec, error) {
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &top) != nil {
		return chat.ElicitFormSpec{}, &errUnrenderable{"missing or not a JSON object"}
	}
	if top.Type != "" && top.Type != "object" {
		return chat.ElicitFormSpec{}, &errUnrenderable{fmt.Sprintf("type is %q, not object", top.Type)}
	}
	var form chat.ElicitFormSpec
	if len(top.Properties) == 0 || string(top.Properties) == "null" {
		return form, nil
	}
	members, ok := jsonscan.ObjectMembers(top.Properties)
	if !ok {
		return chat.ElicitFormSpec{}, &errUnrenderable{"properties is not an object"}
	}
	for _, m := range members {
		f, err := parseElicitField(m.Key, top.Properties[m.ValStart:m.End])
		if err != nil {
			return chat.ElicitFormSpec{}, &errUnrenderable{fmt.Sprintf("property %q: %v", m.Key, err)}
		}
		f.Required = slices.Contains(top.Required, m.Key)
		form.Fields = append(form.Fields, f)
	}
	return form, nil
}

type enumConst struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// elicitProperty is a property of a requested schema, as JSON gives it.
type elicitProperty struct {
	Type        json.RawMessage `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Default     json.RawMessage `json:"default"`
	Enum        []string        `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []enumConst     `json:"oneOf"`
	AnyOf       []enumConst     `json:"anyOf"`
	Items       *struct {
		Type  string      `json:"type"`
		Enum  []string    `json:"enum"`
		AnyOf []enumConst `json:"anyOf"`
		OneOf []enumConst `json:"oneOf"`
	} `json:"items"`
	Format    string   `json:"format"`
	MinLength *int     `json:"minLength"`
	MaxLength *int     `json:"maxLength"`
	Minimum   *float64 `json:"minimum"`
	Maximum   *float64 `json:"maximum"`
	MinItems  *int     `json:"minItems"`
	MaxItems  *int     `json:"maxItems"`
}

func parseElicitField(name string, raw json.RawMessage) (chat.ElicitField, error) {
	var p elicitProperty
	if err := json.Unmarshal(raw, &p); err != nil {
		return chat.ElicitField{}, errors.New("not a schema object with primitive keywords")
	}
	var typ string
	if len(p.Type) > 0 && json.Unmarshal(p.Type, &typ) != nil {
		return chat.ElicitField{}, fmt.Errorf("type %s is not one type name", p.Type)
	}
	f := chat.ElicitField{Name: name, Title: p.Title, Description: p.Description, Format: p.Format,
		MinLength: p.MinLength, MaxLength: p.MaxLength, Minimum: p.Minimum, Maximum: p.Maximum,
		MinItems: p.MinItems, MaxItems: p.MaxItems}
	var err error
	switch typ {
	case "string", "":
		err = p.single(&f, typ)
	case "number":
		f.Kind = chat.FieldNumber
	case "integer":
		f.Kind = chat.FieldInteger
	case "boolean":
		f.Kind = chat.FieldBoolean
	case "array":
		err = p.multiple(&f)
	case "object":
		err = errors.New("a nested object (MCP allows only primitive fields)")
	default:
		err = fmt.Errorf("type %q is not a primitive", typ)
	}
	if err != nil {
		return chat.ElicitField{}, err
	}
	if len(p.Default) > 0 && string(p.Default) != "null" {
		v, err := decodeFieldValue(f, p.Default)
		if err != nil {
			return chat.ElicitField{}, fmt.Errorf("default: %v", err)
		}
		f.Default = v
	}
	return f, nil
}

// single makes f a string or a single choice (typ "string", or none when
// the property lists its choices).
func (p *elicitProperty) single(f *chat.ElicitField, typ string) error {
	switch {
	case len(p.OneOf) > 0:
		f.Kind, f.Options = chat.FieldChoice, constOptions(p.OneOf)
	case len(p.AnyOf) > 0:
		f.Kind, f.Options = chat.FieldChoice, constOptions(p.AnyOf)
	case len(p.Enum) > 0:
		f.Kind = chat.FieldChoice
		for i, v := range p.Enum {
			label := v
			if i < len(p.EnumNames) && p.EnumNames[i] != "" {
				label = p.EnumNames[i]
			}
			f.Options = append(f.Options, chat.ElicitOption{Value: v, Label: label})
		}
	case typ == "":
		return errors.New("no type")
	default:
		f.Kind = chat.FieldString
		switch p.Format {
		case "", "email", "uri", "date", "date-time":
		default:
			f.Format = "" // an unknown format checks nothing
		}
	}
	return nil
}

// multiple makes f a multiple choice of strings (typ "array").
func (p *elicitProperty) multiple(f *chat.ElicitField) error {
	if p.Items == nil || (p.Items.Type != "" && p.Items.Type != "string") {
		return errors.New("an array that is not a multiple choice of strings")
	}
	f.Kind = chat.FieldMultiChoice
	switch {
	case len(p.Items.AnyOf) > 0:
		f.Options = constOptions(p.Items.AnyOf)
	case len(p.Items.OneOf) > 0:
		f.Options = constOptions(p.Items.OneOf)
	default:
		for _, v := range p.Items.Enum {
			f.Options = append(f.Options, chat.ElicitOption{Value: v, Label: v})
		}
	}
	if len(f.Options) == 0 {
		return errors.New("a multiple choice without choices")
	}
	return nil
}

func constOptions(cs []enumConst) []chat.ElicitOption {
	out := make([]chat.ElicitOption, 0, len(cs))
	for _, c := range cs {
		label := c.Title
		if label == "" {
			label = c.Const
		}
		out = append(out, chat.ElicitOption{Value: c.Const, Label: label})
	}
	return out
}

// decodeFieldValue reads a JSON value of f's kind (a default, or a value
// the answer already holds in JSON) and checks it.
func decodeFieldValue(f chat.ElicitField, raw json.RawMessage) (any, error) {
	var v any
	switch f.Kind {
	case chat.FieldString, chat.FieldChoice:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errors.New("not a string")
		}
		v = s
	case chat.FieldNumber:
		var n float64
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, errors.New("not a number")
		}
		v = n
	case chat.FieldInteger:
		var n float64
		if err := json.Unmarshal(raw, &n); err != nil || n != math.Trunc(n) {
			return nil, errors.New("not an integer")
		}
		v = int64(n)
	case chat.FieldBoolean:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, errors.New("not true or false")
		}
		v = b
	case chat.FieldMultiChoice:
		var ss []string
		if err := json.Unmarshal(raw, &ss); err != nil {
			return nil, errors.New("not a list of strings")
		}
		v = ss
	}
	return v, f.Check(v)
}
