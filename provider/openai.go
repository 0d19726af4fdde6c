package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/powercontext/powercontext/internal/clock"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultOpenAITimeout bounds one chat-completions call when OpenAIConfig.Timeout is zero.
const DefaultOpenAITimeout = 60 * time.Second

// maxResponseBytes bounds how much of an upstream response body is read.
const maxResponseBytes = 1 << 20

// OpenAIConfig configures an OpenAI-compatible chat-completions client.
type OpenAIConfig struct {
	BaseURL    string        // for example http://host/v1; the client POSTs {BaseURL}/chat/completions
	Model      string        // model name sent with every request
	APIKey     string        // sent as "Authorization: Bearer KEY"; optional for local servers; never logged
	Timeout    time.Duration // per call; DefaultOpenAITimeout when zero
	HTTPClient *http.Client  // optional; a plain client is used when nil
}

// OpenAI is a Provider backed by an OpenAI-compatible chat-completions endpoint using strict JSON-schema output.
type OpenAI struct {
	endpoint string
	model    string
	apiKey   string
	timeout  time.Duration
	client   *http.Client
}

var _ Provider = (*OpenAI)(nil)

// Configuration errors of NewOpenAI (their text never contains configured values).
var (
	ErrBaseURL = errors.New("provider: openai base URL must be an absolute http(s) URL")
	ErrModel   = errors.New("provider: openai model must be set")
)

// NewOpenAI validates cfg and returns a client.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, ErrBaseURL
	}
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		return nil, ErrModel
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultOpenAITimeout
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &OpenAI{endpoint: base + "/chat/completions", model: model, apiKey: cfg.APIKey, timeout: timeout, client: client}, nil
}

// Name implements Provider.
func (*OpenAI) Name() string { return "openai" }

const memorySystemPrompt = `You maintain a long-term memory of durable facts for one project scope.
You receive JSON with "memory" (the facts remembered so far, each with its "entry_id" and "content") and "window" (new Sources, each with a journal "position", "type", "content" and "metadata").
Answer with the changes the window makes to the memory, as a list of operations:
- {"op":"add","entry_id":null,"content":"...","source_positions":[...]} for a new durable, self-contained fact stated in the window (a decision, preference, constraint, name or outcome) that no entry already says;
- {"op":"update","entry_id":N,"content":"...","source_positions":[...]} when the window corrects or restates entry N: content is the entry's new text (or its current text when the window only confirms it); the entry keeps its id;
- {"op":"remove","entry_id":N,"content":null,"source_positions":[...]} when the window says entry N is no longer true.
Each fact is one short sentence. Name only entry_id values present in memory. Cite in "source_positions" the positions of the window Sources that justify the change; cite only positions present in the window.
Do not invent facts. If the window changes nothing, return an empty list.
Answer with JSON only: {"operations":[...]}`

const incubateSystemPrompt = `You propose reusable lessons from task outcomes for human review.
You receive JSON with "window": task-outcome Sources, each with a journal "position", "type", "content" and "metadata".
Propose lessons that would help future tasks succeed: a short "title" (one sentence) and a "lesson" (what to do or avoid, and why).
Cite in "cited_positions" the positions of the window Sources each lesson is based on; cite only positions present in the window.
Do not invent outcomes. If there is nothing worth learning, return an empty list.
Answer with JSON only: {"candidates":[{"title":"...","lesson":"...","cited_positions":[1]}]}`

var memorySchema = json.RawMessage(`{"type":"object","properties":{"operations":{"type":"array","items":{"type":"object",` +
	`"properties":{"op":{"type":"string","enum":["add","update","remove"]},"entry_id":{"type":["integer","null"]},` +
	`"content":{"type":["string","null"]},"source_positions":{"type":"array","items":{"type":"integer"}}},` +
	`"required":["op","entry_id","content","source_positions"],"additionalProperties":false}}},` +
	`"required":["operations"],"additionalProperties":false}`)

var lessonSchema = json.RawMessage(`{"type":"object","properties":{"candidates":{"type":"array","items":{"type":"object",` +
	`"properties":{"title":{"type":"string"},"lesson":{"type":"string"},"cited_positions":{"type":"array","items":{"type":"integer"}}},` +
	`"required":["title","lesson","cited_positions"],"additionalProperties":false}}},"required":["candidates"],"additionalProperties":false}`)

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type jsonSchemaFormat struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

type responseFormat struct {
	Type       string           `json:"type"`
	JSONSchema jsonSchemaFormat `json:"json_schema"`
}

type chatRequest struct {
	Model          string         `json:"model"`
	Messages       []chatMessage  `json:"messages"`
	ResponseFormat responseFormat `json:"response_format"`
	Temperature    float64        `json:"temperature"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
}

type promptSource struct {
	Position int64          `json:"position"`
	Type     string         `json:"type"`
	Content  string         `json:"content"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

func promptWindow(window []Source) []promptSource {
	out := make([]promptSource, 0, len(window))
	for _, s := range sortedWindow(window) {
		out = append(out, promptSource(s))
	}
	return out
}

func windowPositions(window []Source) map[int64]struct{} {
	set := make(map[int64]struct{}, len(window))
	for _, s := range window {
		set[s.Position] = struct{}{}
	}
	return set
}

// validPositions reports whether positions is non-empty and every position is in the window.
func validPositions(positions []int64, window map[int64]struct{}) bool {
	if len(positions) == 0 {
		return false
	}
	for _, p := range positions {
		if _, ok := window[p]; !ok {
			return false
		}
	}
	return true
}

// promptEntry is one current entry as the model sees it: its id and text (its positions, which are outside the
// window, would only invite citing them).
type promptEntry struct {
	EntryID int64  `json:"entry_id"`
	Content string `json:"content"`
}

// ExtractMemory gives the model the current entries with their ids and the window, asks for operations against
// those ids (a strict JSON-schema answer), and checks them (CheckOps): an unknown or removed id, a position outside
// the window, a missing field or an unknown kind is provider/invalid_output. An empty window makes no call.
func (o *OpenAI) ExtractMemory(ctx context.Context, req ExtractMemoryRequest) (ExtractMemoryResponse, error) {
	if len(req.Window) == 0 {
		return ExtractMemoryResponse{Ops: []MemoryOp{}}, nil
	}
	existing := make([]promptEntry, 0, len(req.Existing))
	for _, e := range req.Existing {
		existing = append(existing, promptEntry{EntryID: e.ID, Content: e.Content})
	}
	user, err := json.Marshal(struct {
		Memory []promptEntry  `json:"memory"`
		Window []promptSource `json:"window"`
	}{existing, promptWindow(req.Window)})
	if err != nil {
		return ExtractMemoryResponse{}, errUnavailable() // unencodable metadata; never surface the encoder text
	}
	content, err := o.complete(ctx, memorySystemPrompt, string(user), "memory_operations", memorySchema)
	if err != nil {
		return ExtractMemoryResponse{}, err
	}
	var out struct {
		Operations *[]struct {
			Op              *string  `json:"op"`
			EntryID         *int64   `json:"entry_id"`
			Content         *string  `json:"content"`
			SourcePositions *[]int64 `json:"source_positions"`
		} `json:"operations"`
	}
	if decodeStrict(content, &out) != nil || out.Operations == nil {
		return ExtractMemoryResponse{}, errInvalidOutput()
	}
	ops := make([]MemoryOp, 0, len(*out.Operations))
	for _, raw := range *out.Operations {
		if raw.Op == nil || raw.SourcePositions == nil {
			return ExtractMemoryResponse{}, errInvalidOutput()
		}
		op := MemoryOp{Op: *raw.Op, SourcePositions: sortedUnique(*raw.SourcePositions)}
		switch op.Op {
		case OpAdd:
			if raw.EntryID != nil || raw.Content == nil {
				return ExtractMemoryResponse{}, errInvalidOutput()
			}
		case OpUpdate:
			if raw.EntryID == nil || raw.Content == nil {
				return ExtractMemoryResponse{}, errInvalidOutput()
			}
		case OpRemove:
			if raw.EntryID == nil {
				return ExtractMemoryResponse{}, errInvalidOutput()
			}
		}
		if raw.EntryID != nil {
			op.EntryID = *raw.EntryID
		}
		if raw.Content != nil && op.Op != OpRemove {
			op.Content = truncateUTF8(normalizeText(*raw.Content), MaxEntryBytes)
		}
		ops = append(ops, op)
	}
	if err := CheckOps(req, ops); err != nil {
		return ExtractMemoryResponse{}, err
	}
	return ExtractMemoryResponse{Ops: ops}, nil
}

// IncubateExperience asks the model for lessons from the task-outcome window. An empty window makes no call.
func (o *OpenAI) IncubateExperience(ctx context.Context, req IncubateRequest) (IncubateResponse, error) {
	if len(req.Window) == 0 {
		return IncubateResponse{Candidates: []Lesson{}}, nil
	}
	user, err := json.Marshal(struct {
		Window []promptSource `json:"window"`
	}{promptWindow(req.Window)})
	if err != nil {
		return IncubateResponse{}, errUnavailable()
	}
	content, err := o.complete(ctx, incubateSystemPrompt, string(user), "experience_candidates", lessonSchema)
	if err != nil {
		return IncubateResponse{}, err
	}
	var out struct {
		Candidates *[]struct {
			Title          *string  `json:"title"`
			Lesson         *string  `json:"lesson"`
			CitedPositions *[]int64 `json:"cited_positions"`
		} `json:"candidates"`
	}
	if decodeStrict(content, &out) != nil || out.Candidates == nil {
		return IncubateResponse{}, errInvalidOutput()
	}
	positions := windowPositions(req.Window)
	candidates := make([]Lesson, 0, len(*out.Candidates))
	for _, c := range *out.Candidates {
		if c.Title == nil || c.Lesson == nil || c.CitedPositions == nil {
			return IncubateResponse{}, errInvalidOutput()
		}
		title, lesson := normalizeText(*c.Title), normalizeText(*c.Lesson)
		if title == "" || lesson == "" || !validPositions(*c.CitedPositions, positions) {
			return IncubateResponse{}, errInvalidOutput()
		}
		candidates = append(candidates, Lesson{
			Title:          truncateUTF8(title, MaxTitleBytes),
			Lesson:         truncateUTF8(lesson, MaxLessonBytes),
			CitedPositions: sortedUnique(*c.CitedPositions),
		})
	}
	return IncubateResponse{Candidates: candidates}, nil
}

// decodeStrict decodes exactly one JSON value (optionally inside a ``` code fence) into v.
func decodeStrict(content string, v any) error {
	s := strings.TrimSpace(content)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```")
		if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.HasPrefix(strings.TrimSpace(s[:nl]), "{") {
			s = s[nl+1:] // drop a language tag such as "json"
		}
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// complete performs one chat-completions call and returns choices[0].message.content. Every error is a bounded
// *errclass.Error (wrapped with the caller's context error when the caller cancelled); upstream error
// values and bodies are dropped.
func (o *OpenAI) complete(ctx context.Context, system, user, schemaName string, schema json.RawMessage) (string, error) {
	body, err := json.Marshal(chatRequest{
		Model:       o.model,
		Messages:    []chatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}},
		Temperature: 0,
		ResponseFormat: responseFormat{
			Type:       "json_schema",
			JSONSchema: jsonSchemaFormat{Name: schemaName, Strict: true, Schema: schema},
		},
	})
	if err != nil {
		return "", errUnavailable()
	}
	raw, err := upstream{client: o.client, apiKey: o.apiKey}.postJSON(ctx, o.endpoint, body, o.timeout, maxResponseBytes)
	if err != nil {
		return "", err
	}
	var chat chatResponse
	if json.Unmarshal(raw, &chat) != nil || len(chat.Choices) == 0 || chat.Choices[0].Message.Content == nil {
		return "", errInvalidOutput()
	}
	content := *chat.Choices[0].Message.Content
	if strings.TrimSpace(content) == "" {
		return "", errInvalidOutput()
	}
	return content, nil
}

// unavailable is provider/unavailable, wrapping the caller's context error (bounded text) when the caller itself
// cancelled, so callers can still test errors.Is(err, context.Canceled).
func unavailable(ctx context.Context) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w: %w", errUnavailable(), cerr)
	}
	return errUnavailable()
}

// parseRetryAfter reads a Retry-After header (delay seconds or an HTTP date); zero when absent or invalid.
func parseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 || secs > 24*3600 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := clock.Until(t); d > 0 && d <= 24*time.Hour {
			return d
		}
	}
	return 0
}
