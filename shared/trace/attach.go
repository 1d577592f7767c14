package trace

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/safefetch"
	"github.com/plumehq/plume/shared/textcut"
)

// Defaults of ExtractorConfig.
const (
	DefaultMaxAttachmentBytes    = 10 << 20
	DefaultMaxAttachmentsPerSpan = 20
	DefaultFetchTimeout          = 5 * time.Second
)

const (
	// extractConcurrency bounds the parallel fetches and object writes of one batch.
	extractConcurrency = 8
	// maxFetchesPerBatch bounds the URLs one batch fetches, so that a batch full of URLs ends
	// well within the function's timeout; the rest are kept as references with an error.
	maxFetchesPerBatch = 32
	// maxAttachmentTypeLen bounds Attachment.Type.
	maxAttachmentTypeLen = 64
)

// ExtractorConfig configures an Extractor. Zero values take the defaults.
type ExtractorConfig struct {
	// Hosts are the hosts URL attachments are fetched from: exact names or IP addresses
	// ("cdn.example.com", "127.0.0.1"), or "*.example.com" for any subdomain of example.com.
	// Empty: no URL is fetched. A name that resolves to a loopback, private, link-local or
	// other non-public address is refused unless it is listed exactly (not by a wildcard):
	// safefetch.Config.Hosts.
	Hosts []string
	// MaxBytes is the largest attachment stored (DefaultMaxAttachmentBytes).
	MaxBytes int64
	// MaxPerSpan is how many attachments one span may carry (DefaultMaxAttachmentsPerSpan);
	// the bytes of any further ones are dropped with an error note.
	MaxPerSpan int
	// FetchTimeout bounds each fetch of a URL, redirects included (DefaultFetchTimeout).
	FetchTimeout time.Duration
}

// Extractor moves the attachments of spans into the bucket (DESIGN.md §4, COMPAT.md "Span
// ingestion"): the bytes of files that spans carry inline go into objects of their own, and the
// span keeps a reference. The shapes recognised, in attributes.attachments (every element of
// the array, or the one object) and in output_data when it is a JSON array (every element, and
// the parts of an element's "content" array, as chat messages carry them):
//
//   - {"base64": "<base64 or data URL>", ...}: the bytes inline. The media type is the data
//     URL's, else the item's content_type, mime_type or media_type, else sniffed.
//   - {"url": "data:..."}, {"image_url": "data:..."}, {"image_url": {"url": "data:..."}}
//     (OpenAI image parts): a data URL, inline bytes too.
//   - {"source": {"type": "base64", "media_type": "...", "data": "..."}} (Anthropic content
//     blocks): inline bytes.
//   - {"url": "https://..."}, {"image_url": ...}, {"source": {"type": "url", "url": "..."}}: a
//     remote file, fetched only when its host is allow-listed. In output_data only items whose
//     type names a file (image, image_url, input_image, output_image, audio, input_audio,
//     video, file, document, attachment) count: other objects with a url (search results,
//     links) are left alone.
//
// Each item found becomes an object of the bucket (AttachmentKey) and an Attachment of the
// span; the item itself keeps every field but the bytes (base64, the data URL, source.data),
// plus "attachment": the object's name, or "error": why it was not stored. Remote URLs stay in
// the item. Items are numbered in document order (attributes first), and the name ends with a
// hash of the bytes, so extracting the same span again writes the same keys.
type Extractor struct {
	blobs      Blobs
	maxBytes   int64
	maxPerSpan int
	timeout    time.Duration
	fetcher    *safefetch.Fetcher
}

// NewExtractor returns an Extractor writing to blobs. It fetches URLs with a safefetch.Fetcher
// of the allowed hosts.
//
// NewExtractor returns an error for a host entry that is not a host name, an IP address or
// "*." followed by a host name (no scheme, port or path), or for negative limits.
func NewExtractor(blobs Blobs, cfg ExtractorConfig) (*Extractor, error) {
	if cfg.MaxBytes < 0 || cfg.MaxPerSpan < 0 || cfg.FetchTimeout < 0 {
		return nil, errors.New("attachment limits must not be negative")
	}
	e := &Extractor{
		blobs:      blobs,
		maxBytes:   cmp.Or(cfg.MaxBytes, DefaultMaxAttachmentBytes),
		maxPerSpan: cmp.Or(cfg.MaxPerSpan, DefaultMaxAttachmentsPerSpan),
		timeout:    cmp.Or(cfg.FetchTimeout, DefaultFetchTimeout),
	}
	f, err := safefetch.New(safefetch.Config{
		Hosts: cfg.Hosts, MaxBytes: e.maxBytes, Timeout: e.timeout, UserAgent: "plume-attachments/1",
	})
	if err != nil {
		return nil, fmt.Errorf("attachment %w", err)
	}
	e.fetcher = f
	return e, nil
}

// candidate is one attachment found in a span.
type candidate struct {
	n           int
	typ, label  string
	data        []byte // the bytes, decoded or fetched
	contentType string // declared media type, "" to sniff
	url         string // a remote URL to fetch
	err         string // why the attachment is not stored
	att         *Attachment
}

// payload is where an item keeps its bytes or URL.
type payload struct {
	path      []string // fields leading to the value: ["base64"], ["image_url", "url"] ...
	value     string
	remote    bool   // value is an http(s) URL to fetch; else inline bytes (base64 or data URL)
	mediaType string // the item's declared media type
}

// fileTypes are the item types that make an output_data object with a URL an attachment.
var fileTypes = []string{"image", "image_url", "input_image", "output_image", "audio", "input_audio", "video", "file", "document", "attachment"}

// find reports whether item is an attachment, and where its payload is. Remote URLs count only
// when they will be fetched: other ones stay as they are, as plain references.
func (e *Extractor) find(item map[string]json.RawMessage, output bool) (payload, bool) {
	declared := firstString(item, "content_type", "mime_type", "media_type")
	if v := itemString(item, "base64"); v != "" {
		return payload{path: []string{"base64"}, value: v, mediaType: declared}, true
	}
	if src := itemObject(item, "source"); src != nil {
		switch itemString(src, "type") {
		case "base64":
			if v := itemString(src, "data"); v != "" {
				return payload{path: []string{"source", "data"}, value: v, mediaType: itemString(src, "media_type")}, true
			}
		case "url":
			if p, ok := e.urlPayload([]string{"source", "url"}, itemString(src, "url"), output, item); ok {
				return p, true
			}
		}
	}
	if p, ok := e.urlPayload([]string{"url"}, itemString(item, "url"), output, item); ok {
		return p, true
	}
	if iu := itemObject(item, "image_url"); iu != nil {
		return e.urlPayload([]string{"image_url", "url"}, itemString(iu, "url"), output, item)
	}
	return e.urlPayload([]string{"image_url"}, itemString(item, "image_url"), output, item)
}

func (e *Extractor) urlPayload(at []string, v string, output bool, item map[string]json.RawMessage) (payload, bool) {
	switch {
	case v == "":
		return payload{}, false
	case hasPrefixFold(v, "data:"):
		return payload{path: at, value: v}, true
	}
	if output && !slices.Contains(fileTypes, strings.ToLower(itemString(item, "type"))) {
		return payload{}, false
	}
	u, err := url.Parse(v)
	if err != nil || !e.fetcher.Allows(u) {
		return payload{}, false
	}
	return payload{path: at, value: v, remote: true}, true
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func itemString(m map[string]json.RawMessage, key string) string {
	raw, ok := m[key]
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func firstString(m map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		if v := itemString(m, k); v != "" {
			return v
		}
	}
	return ""
}

func itemObject(m map[string]json.RawMessage, key string) map[string]json.RawMessage {
	raw, ok := m[key]
	if !ok || len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil {
		return nil
	}
	return o
}

// mayHaveAttachments is the cheap test that lets spans without attachments skip extraction:
// no allocation, no parsing.
func mayHaveAttachments(sp *Span) bool {
	if bytes.Contains(sp.Attributes, []byte(`"attachments"`)) {
		return true
	}
	if sp.OutputData == nil {
		return false
	}
	out := strings.TrimLeft(*sp.OutputData, " \t\r\n")
	return strings.HasPrefix(out, "[") && (strings.Contains(out, `"base64"`) ||
		strings.Contains(out, `"url"`) || strings.Contains(out, `"image_url"`) || strings.Contains(out, `"source"`))
}

// Extract moves the attachments of spans (see the shapes above) into the bucket, in place:
// each span gets its Attachments, and its attributes and output_data keep references instead
// of the bytes. Spans without attachments are not touched. A URL that cannot be fetched, an
// undecodable or oversized payload, or one attachment too many is kept as a reference with an
// "error" note and does not fail the span.
//
// Extract returns an error only when the bucket does: errs.Unavailable when it throttles.
func (e *Extractor) Extract(ctx context.Context, projectID string, spans []Span) error {
	type work struct {
		span  *Span
		cands []*candidate
	}
	var todo []work
	fetches := 0
	for i := range spans {
		sp := &spans[i]
		if !mayHaveAttachments(sp) {
			continue
		}
		cands := e.collect(sp)
		for _, c := range cands {
			if c.url != "" && c.err == "" {
				if fetches++; fetches > maxFetchesPerBatch {
					c.err = fmt.Sprintf("not fetched: more than %d URL attachments in one request", maxFetchesPerBatch)
				}
			}
		}
		if len(cands) > 0 {
			todo = append(todo, work{sp, cands})
		}
	}
	if len(todo) == 0 {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(extractConcurrency)
	for _, w := range todo {
		for _, c := range w.cands {
			if c.err == "" {
				g.Go(func() error { return e.store(gctx, projectID, w.span.ID, c) })
			}
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, w := range todo {
		e.apply(w.span, w.cands)
	}
	return nil
}

// collect finds the attachments of sp and decodes their inline bytes.
func (e *Extractor) collect(sp *Span) []*candidate {
	var cands []*candidate
	visit := func(item map[string]json.RawMessage, p payload) []byte {
		c := &candidate{n: len(cands), typ: itemString(item, "type"), label: firstString(item, "label", "filename", "name")}
		cands = append(cands, c)
		switch {
		case c.n >= e.maxPerSpan:
			c.err = fmt.Sprintf("not stored: more than %d attachments in one span", e.maxPerSpan)
		case p.remote:
			c.url = p.value
		default:
			c.data, c.contentType, c.err = e.decode(p)
		}
		return nil
	}
	e.walk(sp, visit)
	return cands
}

// apply rewrites the items of sp found by collect, in the same order, and records the stored
// attachments.
func (e *Extractor) apply(sp *Span, cands []*candidate) {
	i := 0
	attrs, out := e.walk(sp, func(item map[string]json.RawMessage, p payload) []byte {
		if i >= len(cands) {
			return nil // never happens: the walk is the same as collect's
		}
		c := cands[i]
		i++
		return rewriteItem(item, p, c)
	})
	sp.Attributes = attrs
	if out != nil {
		sp.OutputData = out
	}
	var atts []Attachment
	for _, c := range cands {
		if c.att != nil {
			atts = append(atts, *c.att)
		}
	}
	sp.Attachments = mergeAttachments(sp.Attachments, atts)
}

// walk visits every attachment item of sp in document order and returns the attributes and
// output_data with each item that visit returns bytes for replaced by them (output_data is nil
// when unchanged).
func (e *Extractor) walk(sp *Span, visit func(map[string]json.RawMessage, payload) []byte) (json.RawMessage, *string) {
	attrs := rewriteAttributes(sp.Attributes, func(v []byte) ([]byte, bool) {
		if v[0] == '{' { // one attachment, not in an array
			b, ok := e.rewriteItems(slices.Concat([]byte{'['}, v, []byte{']'}), false, false, visit)
			if ok {
				b = b[1 : len(b)-1]
			}
			return b, ok
		}
		return e.rewriteItems(v, false, false, visit)
	})
	var out *string
	if sp.OutputData != nil {
		s := strings.TrimSpace(*sp.OutputData)
		if strings.HasPrefix(s, "[") {
			if b, ok := e.rewriteItems([]byte(s), true, true, visit); ok {
				out = new(string(b))
			}
		}
	}
	return attrs, out
}

// rewriteAttributes returns attrs with the value of every "attachments" member replaced as
// rewrite says; the rest of the object is kept byte for byte.
func rewriteAttributes(attrs []byte, rewrite func([]byte) ([]byte, bool)) json.RawMessage {
	if !bytes.Contains(attrs, []byte(`"attachments"`)) || !json.Valid(attrs) {
		return attrs
	}
	dec := json.NewDecoder(bytes.NewReader(attrs))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return attrs
	}
	type edit struct {
		start, end int
		value      []byte
	}
	var edits []edit
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return attrs
		}
		key, _ := tok.(string)
		start := int(dec.InputOffset())
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return attrs
		}
		end := int(dec.InputOffset())
		if key != "attachments" {
			continue
		}
		for start < end && strings.IndexByte(": \t\n\r", attrs[start]) >= 0 {
			start++
		}
		if !bytes.Equal(attrs[start:end], v) {
			return attrs // never happens: the decoder's offsets frame the value
		}
		if nv, ok := rewrite(v); ok {
			edits = append(edits, edit{start, end, nv})
		}
	}
	if len(edits) == 0 {
		return attrs
	}
	out := make([]byte, 0, len(attrs))
	prev := 0
	for _, ed := range edits {
		out = append(append(out, attrs[prev:ed.start]...), ed.value...)
		prev = ed.end
	}
	return append(out, attrs[prev:]...)
}

// rewriteItems visits the object elements of the JSON array raw (and, when parts is true, the
// object parts of their "content" arrays, one level down) and returns the array, compact, with
// the elements visit replaced; ok is false when nothing changed.
func (e *Extractor) rewriteItems(raw []byte, output, parts bool, visit func(map[string]json.RawMessage, payload) []byte) ([]byte, bool) {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil, false
	}
	changed := false
	for i, el := range elems {
		if len(el) == 0 || el[0] != '{' {
			continue
		}
		var item map[string]json.RawMessage
		if json.Unmarshal(el, &item) != nil {
			continue
		}
		if p, ok := e.find(item, output); ok {
			if nv := visit(item, p); nv != nil {
				elems[i], changed = nv, true
			}
			continue
		}
		if content, ok := item["content"]; parts && ok && len(content) > 0 && content[0] == '[' {
			if nc, ok := e.rewriteItems(content, output, false, visit); ok {
				item["content"] = nc
				elems[i], changed = appendObject(nil, item), true
			}
		}
	}
	if !changed {
		return nil, false
	}
	out := []byte{'['}
	for i, el := range elems {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, el...)
	}
	return append(out, ']'), true
}

// rewriteItem returns item without its inline bytes, with "attachment" (the stored object's
// name) or "error".
func rewriteItem(item map[string]json.RawMessage, p payload, c *candidate) []byte {
	m := maps.Clone(item)
	if !p.remote {
		removePath(m, p.path)
	}
	delete(m, "attachment")
	delete(m, "error")
	if c.att != nil {
		m["attachment"] = appendString(nil, path.Base(c.att.Key))
	}
	if c.err != "" {
		m["error"] = appendString(nil, c.err)
	}
	return appendObject(nil, m)
}

// removePath deletes the field at p (one or two levels deep). An object left empty goes too.
func removePath(m map[string]json.RawMessage, p []string) {
	if len(p) == 1 {
		delete(m, p[0])
		return
	}
	sub := itemObject(m, p[0])
	if sub == nil {
		delete(m, p[0]) // the value was a string at the first level: never happens
		return
	}
	delete(sub, p[1])
	if len(sub) == 0 {
		delete(m, p[0])
		return
	}
	m[p[0]] = appendObject(nil, sub)
}

// appendObject appends m as a compact JSON object with sorted keys; values are written as
// they are.
func appendObject(b []byte, m map[string]json.RawMessage) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = append(b, m[k]...)
	}
	return append(b, '}')
}

// decode returns the bytes of an inline payload and its declared media type.
func (e *Extractor) decode(p payload) ([]byte, string, string) {
	v, mediaType := p.value, p.mediaType
	var data []byte
	var err error
	if hasPrefixFold(v, "data:") {
		data, mediaType, err = parseDataURL(v, e.maxBytes)
	} else {
		data, err = decodeBase64(v, e.maxBytes)
	}
	switch {
	case errors.Is(err, errTooLarge):
		return nil, "", fmt.Sprintf("not stored: larger than %d bytes", e.maxBytes)
	case err != nil:
		return nil, "", "not stored: " + err.Error()
	case len(data) == 0:
		return nil, "", "not stored: empty"
	}
	return data, mediaType, ""
}

// errTooLarge is inline bytes over the limit.
var errTooLarge = errors.New("too large")

// parseDataURL decodes a data URL (RFC 2397): data:[<media type>][;base64],<data>.
func parseDataURL(s string, limit int64) ([]byte, string, error) {
	meta, payload, ok := strings.Cut(s[len("data:"):], ",")
	if !ok {
		return nil, "", errors.New("not a data URL")
	}
	isBase64 := false
	if n := len(";base64"); len(meta) >= n && strings.EqualFold(meta[len(meta)-n:], ";base64") {
		meta, isBase64 = meta[:len(meta)-n], true
	}
	if isBase64 {
		data, err := decodeBase64(payload, limit)
		return data, meta, err
	}
	if int64(len(payload)) > 3*limit+3 {
		return nil, "", errTooLarge
	}
	text, err := url.PathUnescape(payload)
	if err != nil {
		return nil, "", errors.New("data URL is not percent-encoded")
	}
	if int64(len(text)) > limit {
		return nil, "", errTooLarge
	}
	return []byte(text), meta, nil
}

// decodeBase64 decodes standard or URL-safe base64, padded or not, ignoring line breaks.
func decodeBase64(s string, limit int64) ([]byte, error) {
	if strings.ContainsAny(s, " \t\r\n") {
		s = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, s)
	}
	if int64(base64.RawStdEncoding.DecodedLen(len(s))) > limit+2 {
		return nil, errTooLarge
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if data, err := enc.DecodeString(s); err == nil {
			if int64(len(data)) > limit {
				return nil, errTooLarge
			}
			return data, nil
		}
	}
	return nil, errors.New("invalid base64")
}

// store fetches c when it is a URL, then writes its object. A failed fetch is noted on c; only
// a failed write is an error.
func (e *Extractor) store(ctx context.Context, projectID, spanID string, c *candidate) error {
	if c.url != "" {
		data, contentType, err := e.fetcher.Get(ctx, c.url)
		if err != nil {
			c.err = fetchNote(err, e.timeout, e.maxBytes)
			slog.WarnContext(ctx, "attachment not fetched", "span_id", spanID, "url", redact(c.url), "error", err)
			return nil
		}
		c.data, c.contentType = data, contentType
	}
	contentType := canonicalMediaType(c.contentType)
	if contentType == "" || contentType == octetStream {
		contentType = http.DetectContentType(c.data)
	}
	// A type a browser would run is stored as bytes (StoredMediaType says why).
	contentType = StoredMediaType(contentType)
	sum := sha256.Sum256(c.data)
	key := AttachmentKey(projectID, spanID, c.n, sum[:], contentType)
	if err := e.blobs.Put(ctx, key, c.data, contentType); err != nil {
		return fmt.Errorf("store attachment %d of span %s: %w", c.n, spanID, err)
	}
	c.att = &Attachment{
		Type:        attachmentType(c.typ, contentType),
		Label:       textcut.Prefix(c.label, MaxNameLen),
		Key:         key,
		ContentType: contentType,
		Size:        int64(len(c.data)),
	}
	c.data = nil
	return nil
}

// redact drops the query and fragment of a URL for logs: they may hold credentials (presigned
// URLs).
func redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparseable URL)"
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

// fetchNote is the error note of a failed fetch. It never quotes addresses or resolver
// answers (the cause is logged instead).
func fetchNote(err error, timeout time.Duration, limit int64) string {
	var timeoutErr interface{ Timeout() bool }
	var status safefetch.StatusError
	switch {
	case errors.Is(err, safefetch.ErrTooLarge):
		return fmt.Sprintf("not fetched: larger than %d bytes", limit)
	case errors.Is(err, safefetch.ErrNotPublic):
		return "not fetched: " + safefetch.ErrNotPublic.Error()
	case errors.Is(err, safefetch.ErrNotAllowed):
		return "not fetched: " + safefetch.ErrNotAllowed.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &timeoutErr) && timeoutErr.Timeout():
		return fmt.Sprintf("not fetched: no answer within %s", timeout)
	case errors.As(err, &status):
		return "not fetched: " + status.Error()
	}
	return "not fetched"
}

// canonicalMediaType returns ct lowercased with its parameters, or "" when it is not a media
// type.
func canonicalMediaType(ct string) string {
	if ct == "" {
		return ""
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !strings.Contains(mt, "/") {
		return ""
	}
	return mime.FormatMediaType(mt, params)
}

// attachmentType is the item's type, with the API names of image parts shortened, else the
// kind of the media type (image, audio, video), else "file".
func attachmentType(itemType, contentType string) string {
	switch t := strings.ToLower(itemType); t {
	case "image_url", "input_image", "output_image":
		return "image"
	case "input_audio":
		return "audio"
	case "":
	default:
		s := textcut.Prefix(t, maxAttachmentTypeLen)
		return s
	}
	major, _, _ := strings.Cut(contentType, "/")
	switch major {
	case "image", "audio", "video":
		return major
	}
	return "file"
}

// mergeAttachments returns stored with the attachments of later added, by key (a later entry
// replaces a stored one with the same key). It returns stored itself when later adds nothing.
func mergeAttachments(stored, later []Attachment) []Attachment {
	if len(later) == 0 {
		return stored
	}
	out := slices.Clone(stored)
	for _, a := range later {
		if i := slices.IndexFunc(out, func(s Attachment) bool { return s.Key == a.Key }); i >= 0 {
			out[i] = a
		} else {
			out = append(out, a)
		}
	}
	return out
}

// WithExtractor makes the Service move the attachments of ingested spans into the bucket
// (Extractor.Extract) before it stores them.
func WithExtractor(e *Extractor) Option { return func(s *Service) { s.extractor = e } }

// Attach records on a stored span an attachment whose object is written separately (a direct
// upload). It is a span update through Ingest: the stored attachments are kept (merged by key)
// and every other field is unchanged.
//
// Attach returns errs.NotFound when the project has no span spanID.
func (s *Service) Attach(ctx context.Context, projectID, spanID string, a Attachment) error {
	sums, err := s.index.Summaries(ctx, projectID, []string{spanID})
	if err != nil {
		return err
	}
	sum, ok := sums[spanID]
	if !ok {
		return errs.NotFound("span %s not found", spanID)
	}
	recs, err := LoadRecords(ctx, s.blobs, map[string]Location{spanID: sum.Location})
	if err != nil {
		return err
	}
	rec, ok := recs[spanID]
	if !ok {
		return errs.NotFound("span %s not found: it has expired", spanID)
	}
	now := s.now().UTC()
	// Merge takes trace id, name, kind and start time from a later write: they are the
	// stored ones. Every optional field is nil and keeps its stored value.
	update := Span{
		ID: rec.ID, TraceID: rec.TraceID, ProjectID: projectID, Name: rec.Name, Kind: rec.Kind,
		StartedAt: rec.StartedAt, CreatedAt: now, UpdatedAt: now, Attachments: []Attachment{a},
	}
	_, err = s.Ingest(ctx, projectID, []Span{update})
	return err
}

// Attachments returns the attachments of a span.
//
// Attachments returns errs.NotFound when the project has no span spanID.
func (q *Queries) Attachments(ctx context.Context, projectID, spanID string) ([]Attachment, error) {
	sums, err := q.r.Summaries(ctx, projectID, []string{spanID})
	if err != nil {
		return nil, err
	}
	sum, ok := sums[spanID]
	if !ok {
		return nil, errs.NotFound("span %s not found", spanID)
	}
	recs, err := LoadRecords(ctx, q.blobs, map[string]Location{spanID: sum.Location})
	if err != nil {
		return nil, err
	}
	return recs[spanID].Attachments, nil
}
