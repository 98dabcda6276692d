// Package jsonscan is the JSON fast path of the MCP client: validation
// (Valid, exactly encoding/json.Valid's answer in one pass), scanning the
// members of an object without decoding them (ObjectMembers, EachMember,
// the Skip functions), the envelope of a JSON-RPC line (ScanEnvelope),
// decoding a string literal (String) and appending one (AppendString,
// AppendCompact). Every line a server writes and every result the mapper
// reads goes through it, so each function is fuzzed against encoding/json.
//
// The scanners trust their input to be valid JSON (checked once with
// Valid): they never decode what they skip.
package jsonscan
