package mcpclient

// ToolTokens is what offering tools costs in every model request, counted
// with the client's tokenizer (Options.CountTokens): the name, description
// and schema of each, plus the providers' framing of a tool (about 8
// tokens).
func (c *Client) ToolTokens(tools []Tool) int {
	const perTool = 8
	n := 0
	for _, t := range tools {
		n += c.countTokens(t.Name) + c.countTokens(t.Description) + c.countTokens(string(t.InputSchema)) + perTool
	}
	return n
}
