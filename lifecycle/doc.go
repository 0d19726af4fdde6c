// Package lifecycle is the data lifecycle of powercontext (docs/protocol.md#forgetting-and-erasing,
// docs/protocol.md#retention): forgetting a Source, erasing a scope, and the retention maintenance runs. It sits
// above the domain packages (sources, memory, experience) and uses the ledger for every change that has to be
// ordered with a scope's other work.
package lifecycle
