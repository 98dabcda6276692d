package spend

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Price is what a million tokens of a model cost, in dollars: input
// tokens, input tokens read from the provider's prompt cache (Cached, at
// most Input's price as providers charge them), and output tokens.
type Price struct {
	Input, Cached, Output float64
}

// Cost prices c: its input tokens not cached at Input, its cached ones at
// Cached, its output at Output. Tokens the provider wrote to its cache are
// input tokens at Input (Anthropic charges them a little more: an
// estimate, as is every request that ended early).
func (p Price) Cost(c Counts) float64 {
	fresh := max(c.Input-c.Cached, 0)
	return (float64(fresh)*p.Input + float64(c.Cached)*p.Cached + float64(c.Output)*p.Output) / 1e6
}

// estimate is the most a request of prompt tokens and an answer of up to
// answer tokens can cost: none of the prompt cached.
func (p Price) estimate(prompt, answer int64) float64 {
	return (float64(prompt)*p.Input + float64(answer)*p.Output) / 1e6
}

// ParsePrices reads LLM_PRICES: comma-separated model=input/cached/output
// entries, dollars per million tokens, such as
// "gpt-4o-mini=0.15/0.075/0.6,gpt-4o=2.5/1.25/10"; input/output alone
// prices cached input tokens at the input price. Its errors say which
// entry is wrong and how it should look.
func ParsePrices(s string) (map[string]Price, error) {
	out := map[string]Price{}
	var errs []error
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		model, p, err := parsePrice(entry)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := out[model]; dup {
			errs = append(errs, fmt.Errorf("%q is priced twice", model))
			continue
		}
		out[model] = p
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// parsePrice reads one model=input/cached/output entry.
func parsePrice(entry string) (string, Price, error) {
	model, nums, ok := strings.Cut(entry, "=")
	model = strings.TrimSpace(model)
	if !ok || model == "" {
		return "", Price{}, fmt.Errorf("%q is not model=input/cached/output (dollars per million tokens, such as gpt-4o=2.5/1.25/10)", entry)
	}
	parts := strings.Split(nums, "/")
	if len(parts) != 2 && len(parts) != 3 {
		return "", Price{}, fmt.Errorf("%q: give input/cached/output (or input/output) in dollars per million tokens, such as %s=2.5/1.25/10", entry, model)
	}
	var f [3]float64
	for i, p := range parts {
		v, err := parseDollars(p)
		if err != nil {
			return "", Price{}, fmt.Errorf("%q: %w", entry, err)
		}
		f[i] = v
	}
	if len(parts) == 2 {
		return model, Price{Input: f[0], Cached: f[0], Output: f[1]}, nil
	}
	if f[1] > f[0] {
		return "", Price{}, fmt.Errorf("%q: the cached input price (%v) is above the input price (%v): the order is input/cached/output", entry, f[1], f[0])
	}
	return model, Price{Input: f[0], Cached: f[1], Output: f[2]}, nil
}

// parseDollars reads a price: a decimal number, 0 or more.
func parseDollars(s string) (float64, error) {
	s = strings.TrimSpace(s)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || strings.ContainsAny(s, "xXpP_") {
		return 0, fmt.Errorf("%q is not a price in dollars, such as 3 or 0.15", s)
	}
	if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q: a price is 0 or more", s)
	}
	return f, nil
}

// Dollars writes an amount as /usage does: "$0", "$0.0042", "$1.25".
func Dollars(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd < 0.01:
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}
