package main

import (
	"slices"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/spend"
)

// models reads the models a chat may pick, their prices and the money
// allowances into c, whose Model and single prices are read:
//
//   - LLM_MODELS alone: its first is the default (c.Model);
//   - LLM_MODEL alone: the only model;
//   - both: LLM_MODEL must be one of LLM_MODELS, and is the default
//     (moved first) — a model the list leaves out is refused, not added;
//   - LLM_PRICES prices the models it names; LLM_PRICE_*_PER_MTOK price
//     the default model, unless LLM_PRICES does too (refused: which one
//     is meant?);
//   - a money allowance needs a price for every model offered.
func (l *configLoader) models(c *LLMConfig) {
	list := l.names("llm.models")
	switch {
	case len(list) == 0 && c.Model != "":
		list = []string{c.Model}
	case len(list) > 0 && c.Model == "":
		c.Model = list[0]
	case len(list) > 0:
		i := slices.Index(list, c.Model)
		if i < 0 {
			l.errorf("llm.model", "%q is not one of %s (%s): leave it unset (the first is the default) or name one of them",
				c.Model, l.label("llm.models"), strings.Join(list, ", "))
			break
		}
		list = append([]string{c.Model}, slices.Delete(slices.Clone(list), i, i+1)...)
	}
	c.Models = list

	c.Prices = map[string]spend.Price{}
	if s := l.str("llm.prices"); s != "" {
		p, err := spend.ParsePrices(s)
		if err != nil {
			l.errorf("llm.prices", "%s", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		c.Prices = p
	}
	if c.PriceInputPerMTok > 0 || c.PriceOutputPerMTok > 0 {
		if _, both := c.Prices[c.Model]; both {
			l.errorf("llm.prices", "prices the default model %s, which LLM_PRICE_INPUT_PER_MTOK and LLM_PRICE_OUTPUT_PER_MTOK "+
				"(llm.price_*_per_mtok) price too: keep one of them", c.Model)
		} else if c.Model != "" {
			c.Prices[c.Model] = spend.Price{Input: c.PriceInputPerMTok, Cached: c.PriceInputPerMTok, Output: c.PriceOutputPerMTok}
		}
	}
	if len(c.Prices) == 0 {
		c.Prices = nil
	}
	c.DailyUSDPerChat = l.dollars("llm.daily_usd_per_chat")
	c.DailyUSDPerUser = l.dollars("llm.daily_usd_per_user")
	for key, usd := range map[string]float64{"llm.daily_usd_per_chat": c.DailyUSDPerChat, "llm.daily_usd_per_user": c.DailyUSDPerUser} {
		if usd <= 0 {
			continue
		}
		for _, m := range c.Models {
			if _, ok := c.Prices[m]; !ok {
				l.errorf(key, "needs a price for every model offered, and %s has none: price it in LLM_PRICES (model=input/cached/output)", m)
			}
		}
	}
}

// names reads a list of model names: a list in the file, or a
// comma-separated string; each once.
func (l *configLoader) names(key string) []string {
	items := l.list(key, "must be a list of model names", false)
	var out []string
	for _, s := range items {
		s = strings.TrimSpace(s)
		switch {
		case s == "":
		case strings.ContainsAny(s, " \t\r\n"):
			l.errorf(key, "%q: a model name has no spaces", s)
		case slices.Contains(out, s):
			l.errorf(key, "names %s twice", s)
		default:
			out = append(out, s)
		}
	}
	return out
}

// dollars reads an amount of dollars, 0 or more; 0 when unset.
func (l *configLoader) dollars(key string) float64 {
	return l.decimal(key, "an amount in dollars, such as 2 or 0.50, 0 for none", "0 (none) or more")
}
