package api

// User is who did something, as answers name them (created_by of feedback and feedback links,
// spec §2.5): the user of the API key, or for feedback given through a feedback link, the
// link's reviewer.
type User struct {
	ID    string `json:"id"`
	Email string `json:"email,omitempty"`
	Name  string `json:"name,omitempty"`
}
