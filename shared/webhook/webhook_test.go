package webhook

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// TestSignStandardWebhooksVector: the example of the Standard Webhooks specification.
func TestSignStandardWebhooksVector(t *testing.T) {
	key, err := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	require.NoError(t, err)
	got := Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	assert.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", got)
	assert.Equal(t, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", SecretString(key))
}

func TestRetryDelay(t *testing.T) {
	r := DefaultRetry
	var got []time.Duration
	for n := 1; n <= 8; n++ {
		got = append(got, r.delay(n))
	}
	assert.Equal(t, []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		15 * time.Minute, 15 * time.Minute, 15 * time.Minute}, got)
	// 24 hours of it: about a hundred attempts, not thousands.
	attempts, at := 1, time.Duration(0)
	for at+r.delay(attempts) < r.Window {
		at += r.delay(attempts)
		attempts++
	}
	assert.Equal(t, 100, attempts)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		w    Webhook
		ok   bool
	}{
		{"standard by default", Webhook{URL: "https://ci.example.com/hook", Events: []string{api.EventPromptTagMoved}}, true},
		{"slack", Webhook{URL: "https://hooks.slack.com/x", Events: api.EventTypes, Format: api.WebhookSlack}, true},
		{"not http", Webhook{URL: "ftp://example.com", Events: []string{api.EventPromptTagMoved}}, false},
		{"relative", Webhook{URL: "/hook", Events: []string{api.EventPromptTagMoved}}, false},
		{"credentials", Webhook{URL: "https://u:p@example.com", Events: []string{api.EventPromptTagMoved}}, false},
		{"no events", Webhook{URL: "https://example.com"}, false},
		{"unknown event", Webhook{URL: "https://example.com", Events: []string{"prompt.deleted"}}, false},
		{"unknown format", Webhook{URL: "https://example.com", Events: []string{api.EventPromptTagMoved}, Format: "xml"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(&tt.w)
			if tt.ok {
				require.NoError(t, err)
				assert.NotEmpty(t, tt.w.Format)
				return
			}
			assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err))
		})
	}
}

func TestDeliveryID(t *testing.T) {
	ev := api.Event{ID: "evt_1", Time: time.UnixMilli(1764644400123)}
	a, b := DeliveryID(ev, "wh_a"), DeliveryID(ev, "wh_b")
	assert.Regexp(t, `^dlv_1764644400123_[0-9a-f]{12}$`, a)
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, DeliveryID(ev, "wh_a"), "the same fan-out, the same delivery")
}
