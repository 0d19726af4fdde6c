/*
Package sources holds the Source journal and the windows read from it (docs/protocol.md#windows-and-cursors).

A Source is immutable evidence captured into a scope. Each scope has a journal: positions 1, 2, 3… with a
high-watermark row (pc_source_journal_heads) advanced in the same transaction as the insert, under the head's row
lock, so positions are dense and never reused. Capturing the same (scope_id, source_id) twice returns the first
capture.

A cursor (pc_source_cursors) marks how far one consumer (memory-source-window, experience-incubation) has
committed; a missing row reads as (0, 0). A window is (after, through] with after = cursor.position and
through = min(head, after + limit). Windows are computed under the consumer's ledger lane lock (WindowSpec), and
every cursor advance happens in the ledger's final transaction under the same lane lock with a compare-and-set on
(position, generation) (Advance), so a window can never be created for a cursor that already moved.
*/
package sources
