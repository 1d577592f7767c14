package otlp

import (
	"strings"

	"github.com/plumehq/plume/shared/trace"
)

// field is a span attribute that the mapping reads. Synonyms are separate fields: their
// priority is decided where they are read (see MAPPING.md).
type field uint8

// The fields, grouped by what they map to.
const (
	fNone field = iota

	// kind
	fOpenInferenceKind // openinference.span.kind
	fOperationName     // gen_ai.operation.name
	fTraceloopKind     // traceloop.span.kind
	fLLMRequestType    // llm.request.type
	fHTTPRequestMethod // http.request.method
	fHTTPMethod        // http.method
	fDBSystemName      // db.system.name
	fDBSystem          // db.system

	// provider and model
	fProviderName  // gen_ai.provider.name
	fGenAISystem   // gen_ai.system
	fLLMProvider   // llm.provider
	fLLMSystem     // llm.system
	fProvider      // provider
	fResponseModel // gen_ai.response.model
	fRequestModel  // gen_ai.request.model
	fLLMModelName  // llm.model_name
	fLLMModel      // llm.model
	fModel         // model

	// usage
	fInputTokens        // gen_ai.usage.input_tokens
	fPromptTokens       // gen_ai.usage.prompt_tokens
	fOIPromptTokens     // llm.token_count.prompt
	fLLMInputTokens     // llm.input_tokens
	fPlainInputTokens   // inputTokens
	fOutputTokens       // gen_ai.usage.output_tokens
	fCompletionTokens   // gen_ai.usage.completion_tokens
	fOICompletionTokens // llm.token_count.completion
	fLLMOutputTokens    // llm.output_tokens
	fPlainOutputTokens  // outputTokens
	fCacheRead          // gen_ai.usage.cache_read.input_tokens
	fCacheReadOld       // gen_ai.usage.cache_read_input_tokens
	fInputCached        // gen_ai.usage.input_tokens.cached
	fOICacheRead        // llm.token_count.prompt_details.cache_read
	fCacheWrite         // gen_ai.usage.cache_creation.input_tokens
	fCacheWriteOld      // gen_ai.usage.cache_creation_input_tokens
	fInputCacheWrite    // gen_ai.usage.input_tokens.cache_write
	fOICacheWrite       // llm.token_count.prompt_details.cache_write
	fReasoning          // gen_ai.usage.reasoning.output_tokens
	fReasoningOld       // gen_ai.usage.reasoning_tokens
	fOutputReasoning    // gen_ai.usage.output_tokens.reasoning
	fOIReasoning        // llm.token_count.completion_details.reasoning
	fCost               // gen_ai.usage.cost
	fOICost             // llm.cost.total

	// input and output
	fInputMessages      // gen_ai.input.messages
	fOutputMessages     // gen_ai.output.messages
	fSystemInstructions // gen_ai.system_instructions
	fPrompt             // gen_ai.prompt
	fCompletion         // gen_ai.completion
	fInputValue         // input.value
	fOutputValue        // output.value

	// session, user, tags
	fZeroevalSessionID   // zeroeval.session.id
	fSessionID           // session.id
	fConversationID      // gen_ai.conversation.id
	fZeroevalSessionName // zeroeval.session.name
	fSessionName         // session.name
	fZeroevalSessionTags // zeroeval.session.tags
	fUserID              // user.id
	fEndUserID           // enduser.id
	fTagTags             // tag.tags
	fZeroevalTags        // zeroeval.tags
	fZeroevalTraceTags   // zeroeval.trace.tags

	// prompt linkage
	fZeroeval                // zeroeval
	fZeroevalTask            // zeroeval.task
	fZeroevalPromptSlug      // zeroeval.prompt_slug
	fZeroevalPromptVersion   // zeroeval.prompt_version
	fZeroevalPromptVersionID // zeroeval.prompt_version_id
	fZeroevalContentHash     // zeroeval.content_hash
	fTask                    // task

	// code and errors
	fCodeFilepath   // code.filepath
	fCodeFilePath   // code.file.path
	fCodeLineno     // code.lineno
	fCodeLineNumber // code.line.number
	fErrorType      // error.type

	numFields
)

// fieldOf returns the field an attribute key names, fNone for the others.
func fieldOf(key string) field {
	switch key {
	case "openinference.span.kind":
		return fOpenInferenceKind
	case "gen_ai.operation.name":
		return fOperationName
	case "traceloop.span.kind":
		return fTraceloopKind
	case "llm.request.type":
		return fLLMRequestType
	case "http.request.method":
		return fHTTPRequestMethod
	case "http.method":
		return fHTTPMethod
	case "db.system.name":
		return fDBSystemName
	case "db.system":
		return fDBSystem
	case "gen_ai.provider.name":
		return fProviderName
	case "gen_ai.system":
		return fGenAISystem
	case "llm.provider":
		return fLLMProvider
	case "llm.system":
		return fLLMSystem
	case "provider":
		return fProvider
	case "gen_ai.response.model":
		return fResponseModel
	case "gen_ai.request.model":
		return fRequestModel
	case "llm.model_name":
		return fLLMModelName
	case "llm.model":
		return fLLMModel
	case "model":
		return fModel
	case "gen_ai.usage.input_tokens":
		return fInputTokens
	case "gen_ai.usage.prompt_tokens":
		return fPromptTokens
	case "llm.token_count.prompt":
		return fOIPromptTokens
	case "llm.input_tokens":
		return fLLMInputTokens
	case "inputTokens":
		return fPlainInputTokens
	case "gen_ai.usage.output_tokens":
		return fOutputTokens
	case "gen_ai.usage.completion_tokens":
		return fCompletionTokens
	case "llm.token_count.completion":
		return fOICompletionTokens
	case "llm.output_tokens":
		return fLLMOutputTokens
	case "outputTokens":
		return fPlainOutputTokens
	case "gen_ai.usage.cache_read.input_tokens":
		return fCacheRead
	case "gen_ai.usage.cache_read_input_tokens":
		return fCacheReadOld
	case "gen_ai.usage.input_tokens.cached":
		return fInputCached
	case "llm.token_count.prompt_details.cache_read":
		return fOICacheRead
	case "gen_ai.usage.cache_creation.input_tokens":
		return fCacheWrite
	case "gen_ai.usage.cache_creation_input_tokens":
		return fCacheWriteOld
	case "gen_ai.usage.input_tokens.cache_write":
		return fInputCacheWrite
	case "llm.token_count.prompt_details.cache_write":
		return fOICacheWrite
	case "gen_ai.usage.reasoning.output_tokens":
		return fReasoning
	case "gen_ai.usage.reasoning_tokens":
		return fReasoningOld
	case "gen_ai.usage.output_tokens.reasoning":
		return fOutputReasoning
	case "llm.token_count.completion_details.reasoning":
		return fOIReasoning
	case "gen_ai.usage.cost":
		return fCost
	case "llm.cost.total":
		return fOICost
	case "gen_ai.input.messages":
		return fInputMessages
	case "gen_ai.output.messages":
		return fOutputMessages
	case "gen_ai.system_instructions":
		return fSystemInstructions
	case "gen_ai.prompt":
		return fPrompt
	case "gen_ai.completion":
		return fCompletion
	case "input.value":
		return fInputValue
	case "output.value":
		return fOutputValue
	case "zeroeval.session.id":
		return fZeroevalSessionID
	case "session.id":
		return fSessionID
	case "gen_ai.conversation.id":
		return fConversationID
	case "zeroeval.session.name":
		return fZeroevalSessionName
	case "session.name":
		return fSessionName
	case "zeroeval.session.tags":
		return fZeroevalSessionTags
	case "user.id":
		return fUserID
	case "enduser.id":
		return fEndUserID
	case "tag.tags":
		return fTagTags
	case "zeroeval.tags":
		return fZeroevalTags
	case "zeroeval.trace.tags":
		return fZeroevalTraceTags
	case "zeroeval":
		return fZeroeval
	case "zeroeval.task":
		return fZeroevalTask
	case "zeroeval.prompt_slug":
		return fZeroevalPromptSlug
	case "zeroeval.prompt_version":
		return fZeroevalPromptVersion
	case "zeroeval.prompt_version_id":
		return fZeroevalPromptVersionID
	case "zeroeval.content_hash":
		return fZeroevalContentHash
	case "task":
		return fTask
	case "code.filepath":
		return fCodeFilepath
	case "code.file.path":
		return fCodeFilePath
	case "code.lineno":
		return fCodeLineno
	case "code.line.number":
		return fCodeLineNumber
	case "error.type":
		return fErrorType
	}
	return fNone
}

// family is a group of flattened, indexed attributes that make one JSON array of messages.
type family uint8

// The families of flattened message attributes.
const (
	famPrompt         family = iota // gen_ai.prompt.<i>.<key>
	famCompletion                   // gen_ai.completion.<i>.<key>
	famInputMessages                // llm.input_messages.<i>.message.<key>
	famOutputMessages               // llm.output_messages.<i>.message.<key>
)

// familyOf returns the family of a flattened message attribute and the path after its prefix.
func familyOf(key string) (family, string, bool) {
	if len(key) < 14 {
		return 0, "", false
	}
	switch key[0] {
	case 'g':
		if rest, ok := strings.CutPrefix(key, "gen_ai.prompt."); ok {
			return famPrompt, rest, true
		}
		if rest, ok := strings.CutPrefix(key, "gen_ai.completion."); ok {
			return famCompletion, rest, true
		}
	case 'l':
		if rest, ok := strings.CutPrefix(key, "llm.input_messages."); ok {
			return famInputMessages, rest, true
		}
		if rest, ok := strings.CutPrefix(key, "llm.output_messages."); ok {
			return famOutputMessages, rest, true
		}
	}
	return 0, "", false
}

// indexedAttr is one flattened message attribute.
type indexedAttr struct {
	fam  family
	path string // after the family's prefix
	v    value
}

// attrs holds the attributes of one span, read once from the span's wire form: for each
// field the first attribute of its name, the flattened messages, and the span's members of
// its attributes object, written as JSON while they are read. It lives on the stack of
// mapper.span, its buffers and field values the mapper's, lent for the span: recording a
// key, or growing the body, takes no write barrier while the garbage collector runs, and
// the field values are not cleared for every span (only those set are read).
type attrs struct {
	// vals[f] is the value of the first attribute of field f, when set[f]. The values are
	// the mapper's (only set ones are read: not cleared from span to span).
	vals *[numFields]value
	set  [numFields]bool
	// body is the span's own members of its attributes object, each after a comma, in
	// their order, the first of duplicate keys. The members named as one of Map's own keys
	// (pending) are left out: whether they are written depends on all the attributes.
	body    []byte
	pending []pendingAttr
	// over is true when body grew beyond trace.MaxAttributeBytes (and was no longer
	// written): the attributes object must be fitted.
	over    bool
	indexed []indexedAttr
	// families has bit f set when indexed holds an attribute of family f.
	families uint8
	// keys are the keys of the attributes object taken so far.
	keys objectKeys
}

// pendingAttr is the first attribute named as one of the keys Map writes itself (provider,
// model, inputTokens, outputTokens, zeroeval), and where in body it goes when Map does not
// write that key.
type pendingAttr struct {
	at    int
	key   string
	value value
}

// attrBuffers are the buffers of attrs kept from span to span.
type attrBuffers struct {
	vals    [numFields]value
	body    []byte
	pending []pendingAttr
	indexed []indexedAttr
	many    map[string]struct{}
}

// borrow lends the buffers to a (a zero attrs).
func (a *attrs) borrow(bufs *attrBuffers) {
	a.vals = &bufs.vals
	a.body, a.pending, a.indexed, a.keys.others.many = bufs.body[:0], bufs.pending[:0], bufs.indexed[:0], bufs.many
	if a.keys.others.many != nil {
		clear(a.keys.others.many)
	}
}

// giveBack returns the buffers of a, which may have grown.
func (a *attrs) giveBack(bufs *attrBuffers) {
	bufs.body, bufs.pending, bufs.indexed, bufs.many = a.body, a.pending, a.indexed, a.keys.others.many
}

// readAttributes reads the attributes of l into a (fresh), of duplicate keys the first, and
// writes their members of the attributes object as it reads them. a.keys holds the keys of
// the object that are taken: the resource and scope members of the current scope, and the
// span's attribute keys that are not fields.
func (m *mapper) readAttributes(a *attrs, l list) {
	m.reserveEnvelopeKeys(a)
	body := a.body
	for k, v := range l.all() {
		f := fieldOf(k)
		switch f {
		case fNone:
			if fam, path, ok := familyOf(k); ok {
				a.indexed = append(a.indexed, indexedAttr{fam: fam, path: path, v: v})
				a.families |= 1 << fam
			}
			if !a.keys.add(k) {
				continue
			}
			if a.over {
				continue
			}
			body = append(body, ',')
			body = appendString(body, k)
			body = append(body, ':')
		case fProvider, fModel, fPlainInputTokens, fPlainOutputTokens, fZeroeval:
			if a.set[f] {
				continue
			}
			a.set[f], a.vals[f] = true, v
			a.pending = append(a.pending, pendingAttr{at: len(body), key: k, value: v})
			continue
		default:
			if a.set[f] {
				continue
			}
			a.set[f], a.vals[f] = true, v
			if a.over {
				continue
			}
			// A field's name needs no escaping (TestFieldNamesNeedNoEscaping).
			body = append(body, ',', '"')
			body = append(body, k...)
			body = append(body, '"', ':')
		}
		body = appendValue(body, v, 1)
		if len(body) > trace.MaxAttributeBytes {
			a.over = true
		}
	}
	a.body = body
}

// has reports whether there is an attribute for f (of any value, empty included).
func (a *attrs) has(f field) bool { return a.set[f] }

// get returns the value of f when present and not empty.
func (a *attrs) get(f field) (value, bool) {
	if a.set[f] && a.vals[f].typ != valueEmpty {
		return a.vals[f], true
	}
	return value{}, false
}

// str returns the first of fields that holds a non-empty scalar, as text.
func (a *attrs) str(fields ...field) string {
	for _, f := range fields {
		if v, ok := a.get(f); ok {
			if s := scalarText(v); s != "" {
				return s
			}
		}
	}
	return ""
}

// count returns the first of fields that holds a token count.
func (a *attrs) count(fields ...field) (int64, bool) {
	for _, f := range fields {
		if v, ok := a.get(f); ok {
			if n, ok := valueCount(v); ok {
				return n, true
			}
		}
	}
	return 0, false
}
