package chat

import (
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
)

// A server's question to the chat's user (MCP elicitation): a form of
// fields, or a page to open; what the user answered, checked field by
// field.

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

// Complete is the content sent for an accepted form: the answers, each
// checked, and the defaults of the fields left out. A required field
// without an answer or a default, or an answer to no field, is an error.
func (form ElicitFormSpec) Complete(content map[string]any) (map[string]any, error) {
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
