package gemini

import "encoding/json"

// The request: the subset of GenerateContentRequest this adapter sends.

type wireRequest struct {
	Contents          []*wireContent        `json:"contents"`
	SystemInstruction *wireContent          `json:"systemInstruction,omitempty"`
	Tools             []map[string]any      `json:"tools,omitempty"`
	ToolConfig        *wireToolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *wireGenerationConfig `json:"generationConfig,omitempty"`
}

// wireContent is one turn. Its parts are *wirePart values, or
// json.RawMessage for parts sent back verbatim (extension blocks).
type wireContent struct {
	Role  string `json:"role,omitempty"`
	Parts []any  `json:"parts"`
}

type wirePart struct {
	Text             *string               `json:"text,omitempty"`
	Thought          bool                  `json:"thought,omitempty"`
	InlineData       *wireBlob             `json:"inlineData,omitempty"`
	FileData         *wireFileData         `json:"fileData,omitempty"`
	FunctionCall     *wireFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *wireFunctionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string                `json:"thoughtSignature,omitempty"`
}

type wireBlob struct {
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"` // base64 in JSON
}

type wireFileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type wireFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type wireFunctionResponse struct {
	ID       string                 `json:"id,omitempty"`
	Name     string                 `json:"name"`
	Response map[string]string      `json:"response"`
	Parts    []wireFunctionRespPart `json:"parts,omitempty"`
}

type wireFunctionRespPart struct {
	InlineData *wireBlob `json:"inlineData"`
}

type wireFunctionDecl struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type wireToolConfig struct {
	FunctionCallingConfig wireFunctionCallingConfig `json:"functionCallingConfig"`
}

type wireFunctionCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type wireGenerationConfig struct {
	MaxOutputTokens    int                 `json:"maxOutputTokens,omitempty"`
	Temperature        *float64            `json:"temperature,omitempty"`
	TopP               *float64            `json:"topP,omitempty"`
	StopSequences      []string            `json:"stopSequences,omitempty"`
	ResponseMimeType   string              `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage     `json:"responseJsonSchema,omitempty"`
	ThinkingConfig     *wireThinkingConfig `json:"thinkingConfig,omitempty"`
}

type wireThinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// The response: a GenerateContentResponse, whole (generateContent) or one
// chunk of a stream.

type wireResponse struct {
	Candidates     []wireCandidate     `json:"candidates"`
	PromptFeedback *wirePromptFeedback `json:"promptFeedback"`
	UsageMetadata  *wireUsage          `json:"usageMetadata"`
	ModelVersion   string              `json:"modelVersion"`
	ResponseID     string              `json:"responseId"`
	// Error is an error sent inside a stream that began with HTTP 200.
	Error *wireStatus `json:"error"`
}

type wireCandidate struct {
	Content           *wireContentIn  `json:"content"`
	FinishReason      string          `json:"finishReason"`
	Index             int             `json:"index"`
	GroundingMetadata json.RawMessage `json:"groundingMetadata"`
}

type wireContentIn struct {
	Parts []json.RawMessage `json:"parts"`
}

type wirePartIn struct {
	Text             *string           `json:"text"`
	Thought          bool              `json:"thought"`
	ThoughtSignature string            `json:"thoughtSignature"`
	FunctionCall     *wireFunctionCall `json:"functionCall"`
}

type wireUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
}

type wirePromptFeedback struct {
	BlockReason        string `json:"blockReason"`
	BlockReasonMessage string `json:"blockReasonMessage"`
}

// wireStatus is a google.rpc.Status: the "error" of an error body.
type wireStatus struct {
	Code    int          `json:"code"`
	Message string       `json:"message"`
	Status  string       `json:"status"`
	Details []wireDetail `json:"details"`
}

// wireDetail is one entry of a Status's details: ErrorInfo (reason),
// RetryInfo (retryDelay) and others, which are ignored.
type wireDetail struct {
	Type       string `json:"@type"`
	Reason     string `json:"reason"`
	RetryDelay string `json:"retryDelay"`
}

// The grounding metadata of a candidate (Google Search grounding and
// retrieval): what becomes citations.

type wireGrounding struct {
	GroundingChunks   []wireGroundingChunk   `json:"groundingChunks"`
	GroundingSupports []wireGroundingSupport `json:"groundingSupports"`
}

type wireGroundingChunk struct {
	Web              *wireSource `json:"web"`
	RetrievedContext *wireSource `json:"retrievedContext"`
	Maps             *wireSource `json:"maps"`
}

type wireSource struct {
	URI   string `json:"uri"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

type wireGroundingSupport struct {
	Segment               wireSegment `json:"segment"`
	GroundingChunkIndices []int       `json:"groundingChunkIndices"`
}

type wireSegment struct {
	StartIndex int    `json:"startIndex"`
	EndIndex   int    `json:"endIndex"`
	Text       string `json:"text"`
}
