package compact

import (
	"github.com/agcore/agcore/compact/internal/tokens"
	"github.com/agcore/agcore/llm"
)

// imageCost estimates an image's tokens. With openAIOnly it applies OpenAI's
// published formula alone (the exact counters); otherwise it takes the
// larger of OpenAI's and Anthropic's, so the estimate is safe for either
// family. Only the image header is decoded.
func imageCost(img llm.Image, openAIOnly bool) int { return tokens.ImageCost(img, openAIOnly) }

func audioCost(a llm.Audio) int { return tokens.AudioCost(a) }

// fileText returns an inline document's bytes as text when its media type
// says it is text.
func fileText(f llm.File) (string, bool) { return tokens.FileText(f) }
