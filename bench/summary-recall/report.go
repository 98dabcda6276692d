package main

import "fmt"

// report prints the runs as Markdown for docs/performance.md.
func report(rs []result, contextTokens int) {
	fmt.Printf("| run | requests | of them summaries | facts the last request carries | facts the answer names | input tokens, 200 turns | vs no budget | largest request | cache-read share of the prompt |\n")
	fmt.Printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	none := rs[len(rs)-1].tokens
	for _, r := range rs {
		fmt.Printf("| %s | %d | %d | %d/%d | %d/%d | %d | %.2f | %d | %.1f%% |\n", r.name, r.requests, r.summaries,
			r.carried, factTurns, r.answered, factTurns, r.tokens, float64(r.tokens)/float64(none), r.largest,
			100*float64(r.hits)/float64(max(r.tokens, 1)))
	}
	fmt.Printf("\nLLM_CONTEXT_TOKENS %d for the budgeted runs; summaries the chat was told of: %d\n", contextTokens, rs[0].notices)
}
