package fakemcp

import (
	"context"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ToolSampleMany (mode ask) asks the client's model {"count": n} times
// at once (1–200), each {"prompt": s} with {"maxTokens": m} (default
// 100) → "sampled a of n; refused r: <the first refusal>". To a client on
// 2025-11-25 or older the n sampling/createMessage requests go out
// together, each on its own goroutine, and each refusal is counted on its
// own (a server that fans out, as one calling createMessage in a
// Promise.all does); to a client on 2026-07-28 they are one
// input_required result with n input requests.
const ToolSampleMany = "sample_many"

// maxSampleMany bounds sample_many's count.
const maxSampleMany = 200

func (f *fake) sampleManyTool() server.ServerTool {
	return server.ServerTool{
		Tool: mcp.NewTool(ToolSampleMany, mcp.WithDescription("Asks the client's model many times at once."),
			mcp.WithString("prompt", mcp.Required(), mcp.Description("What to ask.")),
			mcp.WithNumber("count", mcp.Required(), mcp.Description("How many requests.")),
			mcp.WithNumber("maxTokens", mcp.Description("Each request's maxTokens."))),
		Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := req.GetInt("count", 0)
			if n < 1 || n > maxSampleMany {
				return mcp.NewToolResultError(fmt.Sprintf("count must be 1 to %d", maxSampleMany)), nil
			}
			params := mcp.CreateMessageParams{
				Messages:     []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("prompt", ""))}},
				SystemPrompt: "Answer briefly.", MaxTokens: req.GetInt("maxTokens", 100),
			}
			if mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
				return f.sampleManyInput(req, n, params), nil
			}
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				answered int
				first    error
			)
			for range n {
				wg.Go(func() {
					//lint:ignore SA1019 the server-initiated request of the protocols before 2026-07-28, which a fan-out server sends
					_, err := f.mcp.RequestSampling(ctx, mcp.CreateMessageRequest{
						Request:             mcp.Request{Method: string(mcp.MethodSamplingCreateMessage)},
						CreateMessageParams: params,
					})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						answered++
					case first == nil:
						first = err
					}
				})
			}
			wg.Wait()
			return mcp.NewToolResultText(sampleManyText(answered, n, first)), nil
		},
	}
}

// sampleManyInput is sample_many the 2026-07-28 way: n input requests,
// then the retry that carries their answers.
func (f *fake) sampleManyInput(req mcp.CallToolRequest, n int, params mcp.CreateMessageParams) *mcp.CallToolResult {
	if len(req.Params.InputResponses) > 0 {
		answered := 0
		for i := range n {
			if server.SamplingResponse(req.Params.InputResponses, fmt.Sprintf("s%d", i)) != nil {
				answered++
			}
		}
		return mcp.NewToolResultText(sampleManyText(answered, n, nil))
	}
	b := server.NewInputRequestBuilder("")
	for i := range n {
		b.Sample(fmt.Sprintf("s%d", i), params)
	}
	return b.ToolResult()
}

func sampleManyText(answered, n int, first error) string {
	s := fmt.Sprintf("sampled %d of %d", answered, n)
	if first != nil {
		s += fmt.Sprintf("; refused %d: %v", n-answered, first)
	}
	return s
}
