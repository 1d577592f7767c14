package signals_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestSessionSignalsByTheSDKsID: a session id that is not a UUID (ze.set_signal's session,
// sent as the application named it) names the session ingestion stores under its uuid5, on
// every path that writes or reads a session's signals and choices. For each write path the
// signal is written under the raw name, read back by the raw name and by the uuid5 (GET
// /signals/entity/session/{id}), and shown on GET /sessions/{uuid5}; a choice recorded by the
// raw name and again by the uuid5 is one choice, to which the session's signals, sent under
// either id, count once.
func TestSessionSignalsByTheSDKsID(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	at := float64(time.Now().UnixMicro()) / 1e6
	sig := func(id, name string, v any) map[string]any {
		return map[string]any{"entity_type": "session", "entity_id": id, "name": name, "value": v}
	}
	// signals reads GET /signals/entity/session/{id} as name -> value.
	signals := func(t *testing.T, id string) map[string]any {
		t.Helper()
		var got []api.Signal
		srv.MustDo(t, "GET", "/signals/entity/session/"+url.PathEscape(id), a.Key, nil).Decode(t, &got)
		out := map[string]any{}
		for _, s := range got {
			out[s.Name] = s.Value
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		write func(t *testing.T, raw string)
	}{
		{"POST /signals/bulk", func(t *testing.T, raw string) {
			srv.MustDo(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": []any{sig(raw, "turns", 3)}})
		}},
		{"POST /signals/", func(t *testing.T, raw string) {
			srv.MustDo(t, "POST", "/signals/", a.Key, sig(raw, "turns", 3))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw := "chat " + uuid.NewString()[:8]
			canonical := uuid.NewSHA1(uuid.NameSpaceDNS, []byte(raw)).String()
			tt.write(t, raw)
			want := map[string]any{"turns": 3.0}
			assert.Equal(t, want, signals(t, raw), "read by the raw id")
			assert.Equal(t, want, signals(t, canonical), "read by its uuid5")

			srv.MustDo(t, "POST", "/spans", a.Key, []any{map[string]any{"id": uuid.NewString(), "trace_id": uuid.NewString(),
				"session_id": raw, "name": "turn", "started_at": at, "ended_at": at + 1}})
			var sess api.SessionWithSignals
			srv.MustDo(t, "GET", "/sessions/"+canonical, a.Key, nil).Decode(t, &sess)
			assert.Equal(t, canonical, sess.ID)
			require.Len(t, sess.Signals, 1, "shown with the session ingestion stored")
			assert.Equal(t, "turns", sess.Signals[0].Name)
		})
	}

	t.Run("POST /ab-choices", func(t *testing.T) {
		raw := "chat " + uuid.NewString()[:8]
		canonical := uuid.NewSHA1(uuid.NameSpaceDNS, []byte(raw)).String()
		var first, again api.ABChoiceAnswer
		srv.MustDo(t, "POST", "/ab-choices", a.Key, choiceBody("session", raw, "by-session-id", "b", 7)).Decode(t, &first)
		srv.MustDo(t, "POST", "/ab-choices", a.Key, choiceBody("session", canonical, "by-session-id", "b", 7)).Decode(t, &again)
		require.NotNil(t, first.ABChoiceID)
		require.NotNil(t, again.ABChoiceID)
		assert.Equal(t, *first.ABChoiceID, *again.ABChoiceID, "one session, one choice id")
		require.NotNil(t, first.Recorded)
		require.NotNil(t, again.Recorded)
		assert.True(t, *first.Recorded)
		assert.False(t, *again.Recorded, "the uuid5 names the session the raw id recorded")

		srv.MustDo(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": []any{sig(raw, "converted", true)}})
		srv.MustDo(t, "POST", "/signals/", a.Key, sig(canonical, "converted", true))
		rep := report(t, srv, a, "by-session-id")
		require.Len(t, rep.Results, 2)
		assert.Equal(t, int64(0), rep.Results[0].Choices)
		assert.Equal(t, int64(1), rep.Results[1].Choices, "counted once")
		require.Len(t, rep.Results[1].Signals, 1)
		assert.Equal(t, int64(1), rep.Results[1].Signals[0].N, "the session's signal counts once, whichever id sent it")
		assert.Equal(t, map[string]any{"converted": true}, signals(t, raw))
	})

	t.Run("other entities are kept as sent", func(t *testing.T) {
		srv.MustDo(t, "POST", "/signals/", a.Key, map[string]any{"entity_type": "trace", "entity_id": "not-a-uuid", "name": "x", "value": 1})
		var got []api.Signal
		srv.MustDo(t, "GET", "/signals/entity/trace/not-a-uuid", a.Key, nil).Decode(t, &got)
		assert.Len(t, got, 1)
		srv.MustDo(t, "GET", "/signals/entity/trace/"+uuid.NewSHA1(uuid.NameSpaceDNS, []byte("not-a-uuid")).String(), a.Key, nil).Decode(t, &got)
		assert.Empty(t, got)
	})
}
