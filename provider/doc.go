// Package provider holds the model providers that background work uses to turn Sources into durable context
// (docs/architecture.md#what-it-is): memory extraction for the memory flush and lesson proposal for experience incubation.
//
// Two providers implement the Provider interface:
//
//   - Local, the built-in deterministic extractor used by default. It needs no network and returns the same
//     output for the same input.
//   - OpenAI, a client for any OpenAI-compatible chat-completions endpoint. It shows the model the current entries
//     with their ids, asks for a strict JSON-schema answer of operations against them, and checks that answer.
//
// Both answer a window with operations — add, update (supersede) or remove, by entry id, each citing the window
// positions that justify it (MemoryOp); ApplyOps turns them into the next complete revision
// (docs/memory.md#operations).
//
// WithRateLimit wraps a Provider so that every call first asks a shared (cross-replica) limiter.
//
// Two embedders implement the Embedder interface (docs/memory.md#embeddings): LocalEmbedder, deterministic and
// offline (feature-hashed words, stems and trigrams; lexical, not semantic), and OpenAIEmbedder, a client for any
// OpenAI-compatible embeddings endpoint that shares the chat client's request code and error classification.
// WithEmbedRateLimit gates an Embedder like WithRateLimit a Provider.
//
// Errors are *errclass.Error values carrying only the bounded (category, code, retryable) triple of
// docs/protocol.md#errors: provider/rate_limited, provider/unavailable or provider/invalid_output.
//
// Privacy rule (docs/architecture.md#privacy): the API key, request and response bodies, prompts, Source content, model output and
// upstream error text never enter returned errors or logs. Errors carry only the bounded pair; upstream errors
// (for example *url.Error, whose text contains the URL) are classified and dropped, never wrapped. This package
// does not log.
package provider
