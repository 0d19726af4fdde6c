// Package provider holds the model providers that background work uses to turn Sources into durable context
// (docs/architecture.md#what-it-is): memory extraction for the memory flush and lesson proposal for experience incubation.
//
// Two providers implement the Provider interface:
//
//   - Local, the built-in deterministic extractor used by default. It needs no network and returns the same
//     output for the same input.
//   - OpenAI, a client for any OpenAI-compatible chat-completions endpoint. It asks for strict JSON output,
//     checks that output, and merges new facts into the existing memory with the same helper as Local. Both
//     providers therefore return the complete new memory.
//
// WithRateLimit wraps a Provider so that every call first asks a shared (cross-replica) limiter.
//
// Two embedders implement the Embedder interface (docs/memory.md#embeddings): LocalEmbedder, deterministic and
// offline (feature-hashed words, stems and trigrams; lexical, not semantic), and OpenAIEmbedder, a client for any
// OpenAI-compatible embeddings endpoint that shares the chat client's request code and error classification.
// WithEmbedRateLimit gates an Embedder like WithRateLimit a Provider.
//
// Errors are *coordinator.HandlerError values carrying only the bounded (category, code, retryable) triple of
// docs/protocol.md#errors: provider/rate_limited, provider/unavailable or provider/invalid_output.
//
// Privacy rule (docs/architecture.md#privacy): the API key, request and response bodies, prompts, Source content, model output and
// upstream error text never enter returned errors or logs. Errors carry only the bounded pair; upstream errors
// (for example *url.Error, whose text contains the URL) are classified and dropped, never wrapped. This package
// does not log.
package provider
