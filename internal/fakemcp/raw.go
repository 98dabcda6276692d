package fakemcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// rawVersions are the protocol versions raw-echo accepts in initialize. It
// answers anything else with the newest one.
var rawVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

const rawToolsList = `{"tools":[{"name":"echo","description":"Echoes the text back.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"The text to echo."}},"required":["text"]}}]}`

// serveRaw is raw-echo: a minimal JSON-RPC loop with no MCP library, so
// benchmarks measure the client rather than the server. It answers
// initialize, ping, tools/list and tools/call echo; any other request
// (server/discover included, so a 2026-07-28 client falls back to
// initialize at once) gets "method not found"; notifications are ignored.
func serveRaw(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)
	var resp []byte
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(bytes.TrimSpace(line)) > 0 {
			resp = rawHandle(resp[:0], line)
			if len(resp) > 0 {
				if _, werr := w.Write(resp); werr != nil {
					return werr
				}
				if werr := w.Flush(); werr != nil {
					return werr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// rawHandle appends the answer to one message (nothing for a notification).
func rawHandle(dst, line []byte) []byte {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return rawError(dst, []byte("null"), -32700, "parse error")
	}
	if len(req.ID) == 0 || bytes.Equal(req.ID, []byte("null")) {
		return dst // a notification
	}
	switch req.Method {
	case "tools/call":
		var p struct {
			Name      string `json:"name"`
			Arguments struct {
				Text string `json:"text"`
			} `json:"arguments"`
		}
		if json.Unmarshal(req.Params, &p) != nil || p.Name != "echo" {
			return rawError(dst, req.ID, -32602, "unknown tool")
		}
		dst = rawResultStart(dst, req.ID)
		dst = append(dst, `{"content":[{"type":"text","text":`...)
		dst = appendJSONString(dst, p.Arguments.Text)
		return append(dst, "}]}}\n"...)
	case "tools/list":
		dst = rawResultStart(dst, req.ID)
		dst = append(dst, rawToolsList...)
		return append(dst, "}\n"...)
	case "ping":
		dst = rawResultStart(dst, req.ID)
		return append(dst, "{}}\n"...)
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		version := rawVersions[0]
		for _, v := range rawVersions {
			if v == p.ProtocolVersion {
				version = v
			}
		}
		dst = rawResultStart(dst, req.ID)
		dst = append(dst, `{"protocolVersion":"`...)
		dst = append(dst, version...)
		dst = append(dst, `","capabilities":{"tools":{}},"serverInfo":{"name":"`+ServerName+`","version":"`+ServerVersion+`"}}}`+"\n"...)
		return dst
	default:
		return rawError(dst, req.ID, -32601, "method not found")
	}
}

func rawResultStart(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	return append(dst, `,"result":`...)
}

func rawError(dst, id []byte, code int, msg string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = appendInt(dst, code)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, msg)
	return append(dst, "}}\n"...)
}

func appendInt(dst []byte, n int) []byte {
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	return append(dst, b[i:]...)
}

// appendJSONString appends s as a JSON string. s is valid UTF-8 (it was
// decoded from JSON), so only quotes, backslashes and control characters
// need escaping.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
