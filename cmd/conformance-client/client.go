package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
)

// call is one tools/call a scenario expects: a tool by its MCP name and
// its arguments.
type call struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// scenarioCalls are the calls of each scenario that needs more than the
// default (the first tool, with {"a":2,"b":3}); nil calls nothing but the
// discovery. A scenario's context may list its calls instead
// (toolCalls).
var scenarioCalls = map[string]func(tools []mcpclient.Tool) ([]call, error){
	"json-schema-ref-no-deref": nil,
	"request-metadata":         nil,
	"json-schema-2020-12-preservation": func(tools []mcpclient.Tool) ([]call, error) {
		focal, ok := toolNamed(tools, "json_schema_2020_12_tool")
		if !ok {
			return nil, errors.New("json_schema_2020_12_tool is not offered")
		}
		args, err := json.Marshal(map[string]json.RawMessage{"schema": focal.InputSchema})
		return []call{{Name: "json_schema_echo", Arguments: args}}, err
	},
	"sep-2322-client-request-state": func([]mcpclient.Tool) ([]call, error) {
		return []call{{Name: "test_mrtr_echo_state"}, {Name: "test_mrtr_unrelated"}, {Name: "test_mrtr_no_state"},
			{Name: "test_mrtr_no_result_type"}}, nil
	},
	"elicitation-sep1034-client-defaults": func([]mcpclient.Tool) ([]call, error) {
		return []call{{Name: "test_client_elicitation_defaults"}}, nil
	},
	"http-standard-headers": everyTool,
}

// everyTool calls every tool offered with no arguments.
func everyTool(tools []mcpclient.Tool) ([]call, error) {
	calls := make([]call, 0, len(tools))
	for _, t := range tools {
		calls = append(calls, call{Name: t.MCPName})
	}
	return calls, nil
}

func toolNamed(tools []mcpclient.Tool, mcpName string) (mcpclient.Tool, bool) {
	for _, t := range tools {
		if t.MCPName == mcpName {
			return t, true
		}
	}
	return mcpclient.Tool{}, false
}

// runClient is one scenario: args is the server URL.
func runClient(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: conformance-client <server-url> (MCP_CONFORMANCE_SCENARIO set), or conformance-client suite")
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	sctx, err := readScenarioContext()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	client, err := newClient(args[0], os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"), sctx, logger)
	if err != nil {
		return err
	}
	defer client.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	cat, err := discover(ctx, client, logger)
	if err != nil {
		return err
	}
	tools := cat.Tools
	logger.Info("discovered", "scenario", scenario, "tools", len(tools), "protocol", cat.ServerInfo.ProtocolVersion)

	calls, err := scenarioPlan(scenario, sctx.ToolCalls, tools)
	if err != nil || len(calls) == 0 {
		return err
	}
	return makeCalls(ctx, client, tools, calls, logger)
}

// scenarioContext is what the suite tells of a scenario in
// MCP_CONFORMANCE_CONTEXT: the calls it expects, and the credentials of a
// client it registered.
type scenarioContext struct {
	ToolCalls    []call `json:"toolCalls"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// readScenarioContext decodes MCP_CONFORMANCE_CONTEXT, when it is set.
func readScenarioContext() (scenarioContext, error) {
	var sctx scenarioContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sctx); err != nil {
			return sctx, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	return sctx, nil
}

// newClient configures the scenario's server at serverURL as a user would, in
// a settings entry (version, when set, pins the protocol version), and
// returns a client of it alone.
func newClient(serverURL, version string, sctx scenarioContext, logger *slog.Logger) (*mcpclient.Client, error) {
	entry := map[string]any{"url": serverURL, "startupTimeoutSeconds": 20, "callTimeoutSeconds": 20,
		"oauthClientMetadataUrl": clientMetadataURL}
	if sctx.ClientID != "" {
		entry["oauthClientId"], entry["oauthClientSecret"] = sctx.ClientID, sctx.ClientSecret
	}
	if version != "" {
		entry["protocolVersion"] = version
	}
	raw, _ := json.Marshal(entry)
	cfg, err := mcpconfig.ParseEntry("conformance", raw, mcpconfig.SourceConfig, "conformance-client")
	if err != nil {
		return nil, err
	}
	return mcpclient.New(mcpclient.Options{
		Servers:       []mcpconfig.ServerConfig{cfg},
		Env:           redact.NewEnvFilter(os.Environ()),
		Logger:        logger,
		ClientName:    "volcanicbot-conformance",
		ClientVersion: "1.0.0",
	}), nil
}

// discover discovers the server's tools, logging in (up to maxLogins
// times) while the server asks for it.
func discover(ctx context.Context, client *mcpclient.Client, logger *slog.Logger) (mcpclient.Catalog, error) {
	cats := client.Discover(ctx)
	for range maxLogins {
		var nl *mcpclient.NeedsLoginError
		if !errors.As(cats[0].Err, &nl) {
			break
		}
		if err := login(ctx, client, logger); err != nil {
			return mcpclient.Catalog{}, err
		}
		cats = client.Discover(ctx)
	}
	if cats[0].Err != nil {
		return mcpclient.Catalog{}, fmt.Errorf("discovery: %w", cats[0].Err)
	}
	return cats[0].Catalog, nil
}

// scenarioPlan is the calls the scenario expects: those its context
// lists, else its entry in scenarioCalls, else the first tool with
// {"a":2,"b":3} (none when the server offers no tool).
func scenarioPlan(scenario string, listed []call, tools []mcpclient.Tool) ([]call, error) {
	if listed != nil {
		return listed, nil
	}
	plan, planned := scenarioCalls[scenario]
	switch {
	case planned && plan == nil:
	case planned:
		return plan(tools)
	case len(tools) > 0:
		return []call{{Name: tools[0].MCPName, Arguments: json.RawMessage(`{"a":2,"b":3}`)}}, nil
	}
	return nil, nil
}

// makeCalls makes the calls in a chat session of its own, as the bot's
// model would, skipping the tools the client does not offer. It fails at
// the first call or login that fails, or at the end when some results
// were errors.
func makeCalls(ctx context.Context, client *mcpclient.Client, tools []mcpclient.Tool, calls []call, logger *slog.Logger) error {
	workspace, err := os.MkdirTemp("", "conformance-chat-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(workspace)
	session, err := client.NewSession(workspace, "")
	if err != nil {
		return err
	}
	defer session.Close()
	session.SetElicitor(acceptDefaults{})
	var failed []string
	for _, c := range calls {
		tool, ok := toolNamed(tools, c.Name)
		if !ok {
			logger.Info("not called: the client does not offer it", "tool", c.Name)
			continue
		}
		res, err := callWithStepUp(ctx, client, session, tool, c.Arguments, logger)
		if err != nil {
			return err
		}
		logger.Info("called", "tool", c.Name, "error", res.IsError, "result", res.Text())
		if res.IsError {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("error results from %v", failed)
	}
	return nil
}

// callWithStepUp calls tool, and again after a login (up to maxLogins
// times) while the result says it needs one. A call's error is returned
// with the tool's name before it, a login's as it is.
func callWithStepUp(ctx context.Context, client *mcpclient.Client, session *mcpclient.Session, tool mcpclient.Tool,
	args json.RawMessage, logger *slog.Logger) (mcpclient.Result, error) {
	res, err := session.Call(ctx, tool, args)
	for range maxLogins {
		if err != nil || !res.IsError || !strings.Contains(res.Text(), "needs a login") {
			break
		}
		// A step-up: the server wants more scopes for this call.
		if err := login(ctx, client, logger); err != nil {
			return res, err
		}
		res, err = session.Call(ctx, tool, args)
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w", tool.MCPName, err)
	}
	return res, nil
}

// clientMetadataURL is the client ID metadata document the auth
// scenarios expect a client to name where the server supports one.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// maxLogins bounds the logins of one scenario (a server that asks for
// ever more scopes is not obeyed for ever).
const maxLogins = 3

// redirectURL is where the scenarios' authorization server sends the
// browser back; nothing listens there: login reads the redirect itself.
const redirectURL = "http://127.0.0.1:3000/callback"

// login is the user of the auth scenarios: the authorization server
// approves at once, so following its URL up to the redirect back gives
// the address a browser would end on.
func login(ctx context.Context, client *mcpclient.Client, logger *slog.Logger) error {
	l, err := client.Login(ctx, "conformance", redirectURL)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.URL, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("authorization: %w", err)
	}
	resp.Body.Close()
	back := resp.Header.Get("Location")
	if back == "" {
		return fmt.Errorf("authorization answered %d without a redirect", resp.StatusCode)
	}
	if err := l.Finish(ctx, back); err != nil {
		return err
	}
	logger.Info("logged in")
	return nil
}

// acceptDefaults is the user of the scenarios: they accept every
// elicitation without typing anything, which leaves each field its default.
type acceptDefaults struct{}

func (acceptDefaults) Elicit(context.Context, chat.Elicitation) (chat.ElicitResult, error) {
	return chat.ElicitResult{Action: chat.ElicitAccept}, nil
}
