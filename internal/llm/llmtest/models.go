package llmtest

// Model is the model a request asked for: the "model" of a server's
// request body, or llm.Request.Model for the in-memory Model ("" when the
// request named none: the adapter's own).
func (r Request) Model() string {
	if r.JSON != nil {
		m, _ := r.JSON["model"].(string)
		return m
	}
	return r.LLM.Model
}

// Models are the models the requests asked for, in order.
func Models(reqs []Request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Model()
	}
	return out
}
