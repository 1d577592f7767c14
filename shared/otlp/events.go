package otlp

// eventData is what the mapping reads from a span's events.
type eventData struct {
	// exception is true when the span has an "exception" event; the fields are those of the
	// last one (the exception that ended the span, when several were recorded).
	exception                                   bool
	exceptionType, exceptionMessage, stacktrace string
	// GenAI content recorded as events rather than attributes: the gen_ai.prompt and
	// gen_ai.completion attributes of the gen_ai.content.prompt and gen_ai.content.completion
	// events (semantic conventions up to 1.36), and the messages of a
	// gen_ai.client.inference.operation.details event (1.37 and later).
	prompt, completion                                string
	inputMessages, outputMessages, systemInstructions string
}

// Event and attribute names of the OpenTelemetry semantic conventions.
const (
	eventException       = "exception"
	eventPrompt          = "gen_ai.content.prompt"
	eventCompletion      = "gen_ai.content.completion"
	eventOperationDetail = "gen_ai.client.inference.operation.details"
)

// readEvents fills ev from the span's events.
func readEvents(sp *span, ev *eventData) {
	for e := range sp.allEvents() {
		switch e.name {
		case eventException:
			ev.exception = true
			ev.exceptionType, ev.exceptionMessage, ev.stacktrace = "", "", ""
			for k, v := range e.attrs.all() {
				switch k {
				case "exception.type":
					ev.exceptionType = scalarText(v)
				case "exception.message":
					ev.exceptionMessage = scalarText(v)
				case "exception.stacktrace":
					ev.stacktrace = scalarText(v)
				}
			}
		case eventPrompt:
			if v, ok := e.attrs.get("gen_ai.prompt"); ok {
				ev.prompt = valueText(v)
			}
		case eventCompletion:
			if v, ok := e.attrs.get("gen_ai.completion"); ok {
				ev.completion = valueText(v)
			}
		case eventOperationDetail:
			for k, v := range e.attrs.all() {
				switch k {
				case "gen_ai.input.messages":
					ev.inputMessages = valueText(v)
				case "gen_ai.output.messages":
					ev.outputMessages = valueText(v)
				case "gen_ai.system_instructions":
					ev.systemInstructions = valueText(v)
				}
			}
		}
	}
}
