package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSessions(t *testing.T) {
	f := newFixture(t)
	now := time.Now().UTC()
	older, newer, private := uuid.NewString(), uuid.NewString(), uuid.NewString()
	// The older session's traces are posted out of order: the page orders them by start.
	traceIDs, _ := f.seedTraces(t, f.api.A,
		seeded{name: "second turn", start: now.Add(-50 * time.Minute), duration: 3 * time.Second, cost: 0.25, failed: true, session: older},
		seeded{name: "first turn", start: now.Add(-time.Hour), duration: time.Second, cost: 0.5, session: older},
	)
	f.seedTraces(t, f.api.A, seeded{name: "only turn", start: now.Add(-10 * time.Minute), duration: time.Second, session: newer})
	f.seedTraces(t, f.api.B, seeded{name: "B's turn", start: now, duration: time.Second, session: private})
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)

	t.Run("list", func(t *testing.T) {
		p := b.get(t, "/ui/sessions")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `aria-current="page">Sessions`)
		assert.Equal(t, 2, strings.Count(p.Body, `data-testid="session-row"`))
		assert.Less(t, strings.Index(p.Body, "/ui/sessions/"+newer), strings.Index(p.Body, "/ui/sessions/"+older), "newest first")
		assert.NotContains(t, p.Body, private)
		assert.Contains(t, p.Body, `data-testid="sessions-traces">3<`)
		assert.Contains(t, p.Body, `data-testid="sessions-errors">1<`)
		assert.Contains(t, p.Body, `data-testid="sessions-cost">$0.750000<`)
		row := between(t, p.Body, "session-row", "tr")
		assert.Contains(t, row, newer, "the newest first")
	})

	t.Run("a session", func(t *testing.T) {
		p := b.get(t, "/ui/sessions/"+older)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, "<h1 data-testid=\"session-name\">Session "+older+"</h1>")
		assert.Equal(t, 2, strings.Count(p.Body, `data-testid="session-trace"`))
		first, second := strings.Index(p.Body, "/ui/traces/"+traceIDs[1]), strings.Index(p.Body, "/ui/traces/"+traceIDs[0])
		require.Positive(t, first)
		assert.Less(t, first, second, "in the order they started")
		assert.Contains(t, p.Body, `data-testid="session-traces">2<`)
		assert.Contains(t, p.Body, `data-testid="session-spans">4<`)
		assert.Contains(t, p.Body, `data-testid="session-errors">1<`)
		assert.Contains(t, p.Body, `data-testid="session-cost">$0.750000<`)
		// From the first start (an hour ago) to the last end (50 minutes ago plus 3 s).
		assert.Contains(t, p.Body, `data-testid="session-duration">603.00 s<`)
	})

	t.Run("not found", func(t *testing.T) {
		for _, path := range []string{
			"/ui/sessions/" + private,          // another project's
			"/ui/sessions/" + uuid.NewString(), // nobody's
			"/ui/sessions/%01",
		} {
			p := b.get(t, path)
			assert.Equal(t, http.StatusNotFound, p.Status, path)
			assertPage(t, p)
			assert.NotContains(t, p.Body, "B&#39;s turn")
			assert.NotContains(t, p.Body, "B's turn")
		}
	})

	t.Run("an SDK's session id", func(t *testing.T) {
		p := b.get(t, "/ui/sessions/conversation-42?offset=0")
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, "/ui/sessions/"+uuid.NewSHA1(uuid.NameSpaceDNS, []byte("conversation-42")).String(), p.Header.Get("Location"))
		assert.Equal(t, http.StatusSeeOther, b.get(t, "/ui/sessions/"+strings.ToUpper(older)).Status, "a UUID in capitals")
	})

	t.Run("paging", func(t *testing.T) {
		p := b.get(t, "/ui/sessions?offset=1")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Equal(t, 1, strings.Count(p.Body, `data-testid="session-row"`))
		assert.Contains(t, p.Body, "/ui/sessions/"+older)
		assert.Contains(t, p.Body, `href="/ui/sessions" rel="first"`)
		bad := b.get(t, "/ui/sessions?offset=-1")
		assert.Equal(t, http.StatusBadRequest, bad.Status)
		assert.Contains(t, bad.Body, "The page offset must be a whole number")
	})

	t.Run("no sessions", func(t *testing.T) {
		f2 := newFixture(t)
		b2 := f2.browser(t)
		b2.signIn(t, f2.api.A.Key)
		p := b2.get(t, "/ui/sessions")
		require.Equal(t, http.StatusOK, p.Status)
		assert.Contains(t, p.Body, `data-testid="no-sessions"`)
		assert.Contains(t, p.Body, "session_id")
	})
}
