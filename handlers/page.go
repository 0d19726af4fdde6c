package handlers

import "encoding/json"

// DefaultMaxListBytes is the default byte cap of one list page (docs/security.md#limits).
const DefaultMaxListBytes = 1 << 20

// pageOverhead is room for the envelope around the items ({"items":[…],"next_…":"…"}).
const pageOverhead = 512

// page collects the encoded items of one list answer under a byte cap, so a page of large items is never held in
// memory (or on a connection that does not read) beyond the cap.
type page struct {
	max   int
	size  int
	items []json.RawMessage
}

func (s *server) newPage() *page { return &page{max: s.maxListBytes, size: pageOverhead} }

// add encodes v and keeps it unless it would take the page over the cap; the first item is always kept. It
// returns false when v was not kept: the page is full and ends before v.
func (p *page) add(v any) (bool, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return false, err
	}
	if len(p.items) > 0 && p.size+len(b)+1 > p.max {
		return false, nil
	}
	p.items = append(p.items, b)
	p.size += len(b) + 1
	return true, nil
}

// len is the number of items kept.
func (p *page) len() int { return len(p.items) }

// list returns the kept items for the answer (never nil: an empty page is []).
func (p *page) list() []json.RawMessage {
	if p.items == nil {
		return []json.RawMessage{}
	}
	return p.items
}
