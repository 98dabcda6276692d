// Package redact keeps secrets away from places they should not reach.
//
// It has three parts:
//
//   - [EnvFilter] builds the environment of a child process (an MCP server) from
//     a snapshot of the host environment: variables whose names look like
//     secrets ([IsSecretName]) or whose values carry URL credentials are
//     removed, and a server's explicit entries are applied over the result.
//   - [Registry] is the set of known secret values, and [Redactor] the
//     immutable matcher built from it, which replaces every occurrence of a
//     known value with [Placeholder] in one pass over the text.
//   - [NewHandler] wraps a [log/slog.Handler] so that every log line goes
//     through a redactor.
//
// The package imports nothing from this module and does no I/O: the host
// environment is passed in, never read.
package redact
