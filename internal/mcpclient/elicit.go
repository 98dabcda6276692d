package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/jsonscan"
)

// Elicitor asks the chat's user what a server wants to know
// (elicitation/create). The session's chat satisfies it; connections of a
// session without one declare no elicitation capability (discovery and
// check decline every request).
//
// Elicit returns the user's answer: accept with the content (form mode;
// the client checks it against the form and fills in the defaults of the
// fields left out), decline, or cancel. It should return when ctx ends
// (the call timeout, the connection closed) with cancel. The user's
// answers go to the server, never to the model.
type Elicitor interface {
	Elicit(ctx context.Context, e Elicitation) (ElicitResult, error)
}

// ElicitMode is how a server asks: a form of fields, or a URL the user
// opens.
type ElicitMode string

const (
	ElicitForm ElicitMode = "form"
	ElicitURL  ElicitMode = "url"
)

// Elicitation is one elicitation/create of a server.
type Elicitation struct {
	Server  string // the server's configured name
	Mode    ElicitMode
	Message string // the server's question
	Form    ElicitFormSpec
	URL     string // URL mode: the page the user should open
	ID      string // URL mode: the server's elicitationId
	// Completed (URL mode) is closed when the server reports the
	// interaction at the page finished (notifications/elicitation/complete)
	// while the question is open: it should then end as accept. Nil when
	// the server gave no id.
	Completed <-chan struct{}
}

// ElicitAction is the user's answer to an elicitation.
type ElicitAction string

const (
	ElicitAccept  ElicitAction = "accept"
	ElicitDecline ElicitAction = "decline"
	ElicitCancel  ElicitAction = "cancel"
)

// ElicitResult is what the user answered. Content holds accepted form
// answers by field name: string, float64 (number), int64 (integer), bool,
// or []string (a multiple choice).
type ElicitResult struct {
	Action  ElicitAction
	Content map[string]any
}

// FieldKind is the type of one form field.
type FieldKind int

const (
	FieldString FieldKind = iota
	FieldNumber
	FieldInteger
	FieldBoolean
	FieldChoice      // one of Options
	FieldMultiChoice // any of Options
)

// ElicitOption is one choice of an enum field: the value sent and the
// label shown.
type ElicitOption struct {
	Value, Label string
}

// ElicitField is one field of a form: a primitive the user answers (MCP
// allows no nesting in a requested schema).
type ElicitField struct {
	Name        string
	Title       string
	Description string
	Kind        FieldKind
	Required    bool
	Options     []ElicitOption // FieldChoice, FieldMultiChoice
	// Default is the value of a field left out (nil: none), of the kind
	// Content holds.
	Default any
	// Format of a string: email, uri, date or date-time (empty: any).
	Format               string
	MinLength, MaxLength *int
	Minimum, Maximum     *float64
	MinItems, MaxItems   *int
}

// Label is the field's title, or its name.
func (f ElicitField) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// ElicitFormSpec is a form elicitation's requested schema, in the server's
// order of properties.
type ElicitFormSpec struct {
	Fields []ElicitField
}

// errUnrenderable is a requested schema the client cannot ask: it is
// refused with a reason, never left unanswered.
type errUnrenderable struct{ reason string }

func (e *errUnrenderable) Error() string { return "requestedSchema: " + e.reason }

// parseElicitForm reads a requested schema: an object whose properties
// are primitives (string, number, integer, boolean, single- and
// multiple-choice enums).
func parseElicitForm(raw json.RawMessage) (ElicitFormSpec, error) {
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &top) != nil {
		return ElicitFormSpec{}, &errUnrenderable{"missing or not a JSON object"}
	}
	if top.Type != "" && top.Type != "object" {
		return ElicitFormSpec{}, &errUnrenderable{fmt.Sprintf("type is %q, not object", top.Type)}
	}
	var form ElicitFormSpec
	if len(top.Properties) == 0 || string(top.Properties) == "null" {
		return form, nil
	}
	members, ok := jsonscan.ObjectMembers(top.Properties)
	if !ok {
		return ElicitFormSpec{}, &errUnrenderable{"properties is not an object"}
	}
	for _, m := range members {
		f, err := parseElicitField(m.Key, top.Properties[m.ValStart:m.End])
		if err != nil {
			return ElicitFormSpec{}, &errUnrenderable{fmt.Sprintf("property %q: %v", m.Key, err)}
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

func parseElicitField(name string, raw json.RawMessage) (ElicitField, error) {
	var p struct {
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
	if err := json.Unmarshal(raw, &p); err != nil {
		return ElicitField{}, errors.New("not a schema object with primitive keywords")
	}
	var typ string
	if len(p.Type) > 0 && json.Unmarshal(p.Type, &typ) != nil {
		return ElicitField{}, fmt.Errorf("type %s is not one type name", p.Type)
	}
	f := ElicitField{Name: name, Title: p.Title, Description: p.Description, Format: p.Format,
		MinLength: p.MinLength, MaxLength: p.MaxLength, Minimum: p.Minimum, Maximum: p.Maximum,
		MinItems: p.MinItems, MaxItems: p.MaxItems}
	switch typ {
	case "string", "":
		switch {
		case len(p.OneOf) > 0:
			f.Kind, f.Options = FieldChoice, constOptions(p.OneOf)
		case len(p.AnyOf) > 0:
			f.Kind, f.Options = FieldChoice, constOptions(p.AnyOf)
		case len(p.Enum) > 0:
			f.Kind = FieldChoice
			for i, v := range p.Enum {
				label := v
				if i < len(p.EnumNames) && p.EnumNames[i] != "" {
					label = p.EnumNames[i]
				}
				f.Options = append(f.Options, ElicitOption{Value: v, Label: label})
			}
		case typ == "":
			return ElicitField{}, errors.New("no type")
		default:
			f.Kind = FieldString
			switch p.Format {
			case "", "email", "uri", "date", "date-time":
			default:
				f.Format = "" // an unknown format checks nothing
			}
		}
	case "number":
		f.Kind = FieldNumber
	case "integer":
		f.Kind = FieldInteger
	case "boolean":
		f.Kind = FieldBoolean
	case "array":
		if p.Items == nil || (p.Items.Type != "" && p.Items.Type != "string") {
			return ElicitField{}, errors.New("an array that is not a multiple choice of strings")
		}
		f.Kind = FieldMultiChoice
		switch {
		case len(p.Items.AnyOf) > 0:
			f.Options = constOptions(p.Items.AnyOf)
		case len(p.Items.OneOf) > 0:
			f.Options = constOptions(p.Items.OneOf)
		default:
			for _, v := range p.Items.Enum {
				f.Options = append(f.Options, ElicitOption{Value: v, Label: v})
			}
		}
		if len(f.Options) == 0 {
			return ElicitField{}, errors.New("a multiple choice without choices")
		}
	case "object":
		return ElicitField{}, errors.New("a nested object (MCP allows only primitive fields)")
	default:
		return ElicitField{}, fmt.Errorf("type %q is not a primitive", typ)
	}
	if len(p.Default) > 0 && string(p.Default) != "null" {
		v, err := decodeFieldValue(f, p.Default)
		if err != nil {
			return ElicitField{}, fmt.Errorf("default: %v", err)
		}
		f.Default = v
	}
	return f, nil
}

func constOptions(cs []enumConst) []ElicitOption {
	out := make([]ElicitOption, 0, len(cs))
	for _, c := range cs {
		label := c.Title
		if label == "" {
			label = c.Const
		}
		out = append(out, ElicitOption{Value: c.Const, Label: label})
	}
	return out
}

// decodeFieldValue reads a JSON value of f's kind (a default, or a value
// the answer already holds in JSON) and checks it.
func decodeFieldValue(f ElicitField, raw json.RawMessage) (any, error) {
	var v any
	switch f.Kind {
	case FieldString, FieldChoice:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errors.New("not a string")
		}
		v = s
	case FieldNumber:
		var n float64
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, errors.New("not a number")
		}
		v = n
	case FieldInteger:
		var n float64
		if err := json.Unmarshal(raw, &n); err != nil || n != math.Trunc(n) {
			return nil, errors.New("not an integer")
		}
		v = int64(n)
	case FieldBoolean:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, errors.New("not true or false")
		}
		v = b
	case FieldMultiChoice:
		var ss []string
		if err := json.Unmarshal(raw, &ss); err != nil {
			return nil, errors.New("not a list of strings")
		}
		v = ss
	}
	return v, f.Check(v)
}

// ParseAnswer reads what the user typed for f: text for a string, a number,
// yes/no for a boolean, an option's value or label for a choice (several,
// comma-separated, for a multiple choice). The error says what is wrong, to
// ask again.
func (f ElicitField) ParseAnswer(text string) (any, error) {
	text = strings.TrimSpace(text)
	var v any
	switch f.Kind {
	case FieldString:
		v = text
	case FieldNumber:
		n, err := strconv.ParseFloat(strings.ReplaceAll(text, ",", "."), 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, errors.New("that is not a number")
		}
		v = n
	case FieldInteger:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, errors.New("that is not a whole number")
		}
		v = n
	case FieldBoolean:
		switch strings.ToLower(text) {
		case "yes", "y", "true", "1", "on":
			v = true
		case "no", "n", "false", "0", "off":
			v = false
		default:
			return nil, errors.New("answer yes or no")
		}
	case FieldChoice:
		o, ok := f.option(text)
		if !ok {
			return nil, fmt.Errorf("choose one of: %s", f.optionLabels())
		}
		v = o
	case FieldMultiChoice:
		var picked []string
		for part := range strings.SplitSeq(text, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			o, ok := f.option(part)
			if !ok {
				return nil, fmt.Errorf("%q is not a choice: choose among %s", part, f.optionLabels())
			}
			if !slices.Contains(picked, o) {
				picked = append(picked, o)
			}
		}
		v = picked
	}
	if err := f.Check(v); err != nil {
		return nil, err
	}
	return v, nil
}

// option finds a choice by value, then by label, ignoring case.
func (f ElicitField) option(s string) (string, bool) {
	for _, o := range f.Options {
		if o.Value == s {
			return o.Value, true
		}
	}
	for _, o := range f.Options {
		if strings.EqualFold(o.Value, s) || strings.EqualFold(o.Label, s) {
			return o.Value, true
		}
	}
	return "", false
}

func (f ElicitField) optionLabels() string {
	labels := make([]string, len(f.Options))
	for i, o := range f.Options {
		labels[i] = o.Label
	}
	return strings.Join(labels, ", ")
}

// Check reports whether v (of the kind Content holds) is a valid answer
// to f: its type, length, range, format and choices.
func (f ElicitField) Check(v any) error {
	switch f.Kind {
	case FieldString:
		s, ok := v.(string)
		if !ok {
			return errors.New("a text is expected")
		}
		n := utf8.RuneCountInString(s)
		if f.MinLength != nil && n < *f.MinLength {
			return fmt.Errorf("it must be at least %d characters long", *f.MinLength)
		}
		if f.MaxLength != nil && n > *f.MaxLength {
			return fmt.Errorf("it must be at most %d characters long", *f.MaxLength)
		}
		return checkFormat(f.Format, s)
	case FieldNumber, FieldInteger:
		var n float64
		switch x := v.(type) {
		case float64:
			if f.Kind == FieldInteger && x != math.Trunc(x) {
				return errors.New("a whole number is expected")
			}
			n = x
		case int64:
			n = float64(x)
		default:
			return errors.New("a number is expected")
		}
		if f.Minimum != nil && n < *f.Minimum {
			return fmt.Errorf("it must be at least %s", strconv.FormatFloat(*f.Minimum, 'g', -1, 64))
		}
		if f.Maximum != nil && n > *f.Maximum {
			return fmt.Errorf("it must be at most %s", strconv.FormatFloat(*f.Maximum, 'g', -1, 64))
		}
	case FieldBoolean:
		if _, ok := v.(bool); !ok {
			return errors.New("yes or no is expected")
		}
	case FieldChoice:
		s, ok := v.(string)
		if !ok || !slices.ContainsFunc(f.Options, func(o ElicitOption) bool { return o.Value == s }) {
			return fmt.Errorf("choose one of: %s", f.optionLabels())
		}
	case FieldMultiChoice:
		ss, ok := v.([]string)
		if !ok {
			return errors.New("a list of choices is expected")
		}
		for _, s := range ss {
			if !slices.ContainsFunc(f.Options, func(o ElicitOption) bool { return o.Value == s }) {
				return fmt.Errorf("%q is not a choice: choose among %s", s, f.optionLabels())
			}
		}
		if f.MinItems != nil && len(ss) < *f.MinItems {
			return fmt.Errorf("choose at least %d", *f.MinItems)
		}
		if f.MaxItems != nil && len(ss) > *f.MaxItems {
			return fmt.Errorf("choose at most %d", *f.MaxItems)
		}
	}
	return nil
}

func checkFormat(format, s string) error {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return errors.New("that is not an email address")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return errors.New("that is not a URL (with its scheme, such as https://)")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return errors.New("that is not a date (YYYY-MM-DD)")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return errors.New("that is not a date and time (such as 2026-05-01T14:30:00Z)")
		}
	}
	return nil
}

// complete is the content sent for an accepted form: the answers, each
// checked, and the defaults of the fields left out. A required field
// without an answer or a default, or an answer to no field, is an error.
func (form ElicitFormSpec) complete(content map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(form.Fields))
	for _, f := range form.Fields {
		v, ok := content[f.Name]
		if !ok || v == nil {
			if f.Default != nil {
				out[f.Name] = f.Default
			} else if f.Required {
				return nil, fmt.Errorf("%s is required", f.Label())
			}
			continue
		}
		if err := f.Check(v); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Label(), err)
		}
		out[f.Name] = v
	}
	for name := range content {
		if !slices.ContainsFunc(form.Fields, func(f ElicitField) bool { return f.Name == name }) {
			return nil, fmt.Errorf("%q is not a field of the form", name)
		}
	}
	return out, nil
}
