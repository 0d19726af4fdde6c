package provider

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxEmbedResponseBytes bounds how much of an embeddings response is read: MaxEmbedBatch vectors of 3072 numbers
// as JSON text fit comfortably.
const maxEmbedResponseBytes = 16 << 20

// OpenAIEmbeddingsConfig configures an OpenAI-compatible embeddings client.
type OpenAIEmbeddingsConfig struct {
	BaseURL string // for example http://host/v1; the client POSTs {BaseURL}/embeddings
	Model   string // model name sent with every request
	APIKey  string // sent as "Authorization: Bearer KEY"; optional for local servers; never logged
	// Dimensions asks the model for vectors of this length (the request's "dimensions"; 0 = the model's own). It
	// is part of the embedding space: Model() reports "MODEL@DIMENSIONS" when it is set.
	Dimensions int
	Timeout    time.Duration // per call; DefaultOpenAITimeout when zero (a caller's shorter deadline still wins)
	HTTPClient *http.Client  // optional; a plain client is used when nil
}

// OpenAIEmbedder is an Embedder backed by an OpenAI-compatible embeddings endpoint (POST {base}/embeddings with
// {"model", "input": [...], "encoding_format": "float"}, answered by {"data": [{"index", "embedding"}]}).
type OpenAIEmbedder struct {
	endpoint   string
	model      string
	space      string
	dimensions int
	timeout    time.Duration
	up         upstream
}

var _ Embedder = (*OpenAIEmbedder)(nil)

// ErrDimensions is the configuration error of a negative or oversized embedding dimension count.
var ErrDimensions = errors.New("provider: embedding dimensions must be 0 (the model's own) or 1..MaxEmbeddingDimensions")

// MaxEmbeddingDimensions bounds the length of a stored vector (4 bytes per dimension).
const MaxEmbeddingDimensions = 8192

// NewOpenAIEmbedder validates cfg and returns a client.
func NewOpenAIEmbedder(cfg OpenAIEmbeddingsConfig) (*OpenAIEmbedder, error) {
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, ErrBaseURL
	}
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		return nil, ErrModel
	}
	if cfg.Dimensions < 0 || cfg.Dimensions > MaxEmbeddingDimensions {
		return nil, ErrDimensions
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultOpenAITimeout
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	space := model
	if cfg.Dimensions > 0 {
		space += "@" + strconv.Itoa(cfg.Dimensions)
	}
	return &OpenAIEmbedder{endpoint: base + "/embeddings", model: model, space: space, dimensions: cfg.Dimensions,
		timeout: timeout, up: upstream{client: client, apiKey: cfg.APIKey}}, nil
}

// Name implements Embedder.
func (*OpenAIEmbedder) Name() string { return "openai" }

// Model implements Embedder: the model name, with "@DIMENSIONS" when a dimension count is configured.
func (o *OpenAIEmbedder) Model() string { return o.space }

type embeddingsRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

// Embed implements Embedder: one request for all texts. The answer must hold exactly one finite, non-zero vector per
// input (matched by "index"), all of one length (the configured one when set), or the call fails with
// provider/invalid_output. Vectors are returned normalised to unit length. No texts make no call.
func (o *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(embeddingsRequest{Model: o.model, Input: texts, EncodingFormat: "float", Dimensions: o.dimensions})
	if err != nil {
		return nil, errUnavailable()
	}
	raw, err := o.up.postJSON(ctx, o.endpoint, body, o.timeout, maxEmbedResponseBytes)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Data []struct {
			Index     *int       `json:"index"`
			Embedding *[]float32 `json:"embedding"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &resp) != nil || len(resp.Data) != len(texts) {
		return nil, errInvalidOutput()
	}
	out := make([][]float32, len(texts))
	dims := o.dimensions
	for _, d := range resp.Data {
		if d.Index == nil || d.Embedding == nil || *d.Index < 0 || *d.Index >= len(texts) || out[*d.Index] != nil {
			return nil, errInvalidOutput()
		}
		v := *d.Embedding
		if dims == 0 {
			dims = len(v)
		}
		if len(v) != dims || dims > MaxEmbeddingDimensions || !normalize(v) {
			return nil, errInvalidOutput()
		}
		out[*d.Index] = v
	}
	return out, nil
}
