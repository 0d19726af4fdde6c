/*
Package memory turns a scope's Source journal into Memory: the memory flush handler reads the next window of
Sources (at most 100) outside any transaction, asks the model provider for facts, and commits a new Memory
revision — entries with the Source positions they came from — in the ledger's final transaction, advancing the
memory-source-window cursor by compare-and-set. At most one revision is ever committed per window.
*/
package memory
