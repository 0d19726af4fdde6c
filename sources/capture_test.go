package sources_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/sources"
)

func TestCaptureIsIdempotentAndScopesAreByteExact(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		j := sources.NewJournal(s)
		a, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: "scope", SourceID: "m1", Content: "hello"})
		require.NoError(t, err)
		require.True(t, a.Created)
		require.Equal(t, int64(1), a.JournalPosition)
		again, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: "scope", SourceID: "m1", Content: "hello"})
		require.NoError(t, err)
		require.False(t, again.Created)
		require.Equal(t, int64(1), again.JournalPosition)

		// Scopes differing only in case, a trailing space or normalisation are different scopes.
		for _, scope := range []string{"Scope", "scope ", "scope\u00a0", "sc\u00f6pe", "sco\u0308pe"} {
			r, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: scope, SourceID: "m1", Content: "x"})
			require.NoError(t, err)
			require.True(t, r.Created, "scope %q", scope)
			require.Equal(t, int64(1), r.JournalPosition, "scope %q has its own journal", scope)
		}
		b, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: "scope", Content: "second", Metadata: json.RawMessage(`{"b":1,"a":"x"}`)})
		require.NoError(t, err)
		require.Equal(t, int64(2), b.JournalPosition)
		list, err := j.List(ctx, "scope", 0, 10)
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.Equal(t, `{"a":"x","b":1}`, string(list[1].Metadata))
	})
}

func TestConcurrentCapturesGetDensePositions(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		j := sources.NewJournal(s)
		var wg sync.WaitGroup
		errs := make(chan error, 40)
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 5 {
					_, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: "busy", Content: strings.Repeat("x", g+i+1)})
					if err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
			require.False(t, errors.Is(err, db.ErrDeadlock))
		}
		list, err := j.List(ctx, "busy", 0, 100)
		require.NoError(t, err)
		require.Len(t, list, 40)
		for i, src := range list {
			require.Equal(t, int64(i+1), src.JournalPosition)
		}
	})
}

func TestCaptureValidation(t *testing.T) {
	j := sources.NewJournal(nil)
	for _, tc := range []struct {
		req   sources.CaptureRequest
		field string
	}{
		{sources.CaptureRequest{ScopeID: "", Content: "x"}, "scope_id"},
		{sources.CaptureRequest{ScopeID: strings.Repeat("s", 257), Content: "x"}, "scope_id"},
		{sources.CaptureRequest{ScopeID: "s\xff", Content: "x"}, "scope_id"},
		{sources.CaptureRequest{ScopeID: "s", Content: ""}, "content"},
		{sources.CaptureRequest{ScopeID: "s", Content: strings.Repeat("x", 64*1024+1)}, "content"},
		{sources.CaptureRequest{ScopeID: "s", Content: "x", Metadata: json.RawMessage(`[1]`)}, "metadata"},
		{sources.CaptureRequest{ScopeID: "s", Content: "x", Metadata: json.RawMessage(`{"a":1e999}`)}, "metadata"},
		{sources.CaptureRequest{ScopeID: "s", Content: "x", SourceID: strings.Repeat("i", 257)}, "source_id"},
		{sources.CaptureRequest{ScopeID: "s", Content: "x", SourceType: strings.Repeat("t", 65)}, "source_type"},
	} {
		_, err := j.Capture(context.Background(), tc.req)
		var ve *sources.ValidationError
		require.ErrorAs(t, err, &ve)
		require.Equal(t, tc.field, ve.Field)
	}
}
