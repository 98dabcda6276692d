package mcpclient

// EstimateTokens estimates what offering tools costs per model request:
// the name, description and schema of each, at about four bytes a token
// (the usual rule of thumb for JSON and English), plus a small per-tool
// overhead for the provider's framing.
func EstimateTokens(tools []Tool) int {
	const perTool = 8
	n := 0
	for _, t := range tools {
		n += (len(t.Name)+len(t.Description)+len(t.InputSchema))/4 + perTool
	}
	return n
}
