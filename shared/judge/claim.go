package judge

import "time"

// ClaimState is the outcome of a claim on a judge's evaluation of a span's content (the
// runner's lease on its model call: ddb.ClaimStore).
type ClaimState string

const (
	// ClaimAcquired: the caller holds the lease and may call the model.
	ClaimAcquired ClaimState = "acquired"
	// ClaimDone: the span's content (this hash) has been evaluated by the judge; skip it.
	ClaimDone ClaimState = "done"
	// ClaimBusy: another worker holds an unexpired lease on this content; skip it (or retry
	// after LeaseExpiry).
	ClaimBusy ClaimState = "busy"
)

// Claim is the result of a claim (ddb.ClaimStore.Claim).
type Claim struct {
	State ClaimState
	// Token proves ownership to Complete and Release; set only when State is ClaimAcquired.
	Token string
	// LeaseExpiry is the end of the caller's lease (Acquired) or of the holder's (Busy).
	LeaseExpiry time.Time
	// Attempts counts the acquisitions since the claim was last completed, this one included
	// (Acquired), or the holder's (Busy): the number of model calls started for the pending
	// evaluation, for a runner that gives up on a span whose calls keep failing. It is 0 when
	// Done.
	Attempts int
}
