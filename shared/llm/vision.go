package llm

import "strings"

// Vision reports whether model takes images in its messages, by its family: the model name
// without its provider prefix or Bedrock region, case aside. It answers false for families
// that do not (gpt-3.5, o1-mini, o3-mini, Claude 3.5 Haiku, Nova Micro, text-only Llama) and
// for names it does not know, so that an image is never the reason a call fails: a caller
// leaves the images out and says so instead.
func Vision(model string) bool {
	m := strings.ToLower(strings.TrimSpace(lookThrough(model)))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, region := range []string{"us.", "eu.", "apac.", "au.", "jp.", "ca.", "us-gov.", "global."} {
		m = strings.TrimPrefix(m, region)
	}
	for _, vendor := range bedrockVendors {
		m = strings.TrimPrefix(m, vendor)
	}
	has := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(m, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("o1-mini", "o3-mini", "claude-3-5-haiku", "claude-2", "claude-instant", "nova-micro"):
		return false
	case has("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-4-vision", "gpt-5", "o1", "o3", "o4"):
		return true
	case has("claude-"), has("gemini-"), has("nova-lite", "nova-pro", "nova-premier"):
		return true
	case has("llama3-2-11b", "llama3-2-90b", "llama-3.2-11b", "llama-3.2-90b", "llama4", "llama-4"):
		return true
	case strings.Contains(m, "vision"), strings.Contains(m, "-vl"), has("llava", "pixtral"):
		return true
	}
	return false
}
