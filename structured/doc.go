// Package structured runs an agent for an answer in a Go type: [Run]
// returns a T, [Stream] yields the T as its JSON arrives.
//
//	type Contact struct {
//		Name  string `json:"name"`
//		Email string `json:"email,omitempty"`
//	}
//	c, resp, err := structured.Run[Contact](ctx, a, []llm.Message{llm.UserText(text)}, nil)
//
// The schema is made from T by github.com/google/jsonschema-go (the rules
// of package tool's typed tools: json tags, omitempty fields optional, the
// jsonschema tag a description, agcore's enum tag), or given as
// Options.Schema. How the answer is asked for (Options.Mode) follows what
// the model's adapter reports in llm.ModelInfo.Structured:
//
//   - Native: Request.ResponseFormat json_schema. OpenAI's Chat Completions
//     (response_format) and Responses API (text.format) get the strict
//     mode, with the schema made strict-compatible (every property
//     required, additionalProperties false, an optional property nullable);
//     Anthropic gets output_config.format, Gemini responseJsonSchema, a
//     compatible server its json_schema where its preset says it works.
//   - Tool: a generated tool, [ToolName], whose arguments are the answer,
//     offered alongside the agent's tools: the first step must call a
//     tool; a valid call ends the turn (a tool.Final), so its tool_use has
//     its result and the session stays well-formed. The mode for models
//     whose API has no native one.
//   - Prompted: the schema in the last user message, the answer read from
//     the text (a Markdown fence tolerated); chosen only explicitly.
//
// Tools run first, as in any turn; the schema applies to the final answer.
// The answer is validated once, against the schema that was sent (the
// strict form on OpenAI, whose null for an optional property decodes as
// the zero value). An answer that is not JSON or does not validate earns
// the model one repair turn (Options.Repairs) that tells it what failed;
// a refusal (OpenAI's refusal, a provider's content filter) and an answer
// cut by the token limit are not repaired. What failed comes back as a
// *[Error]: its Kind (errors.Is with ErrParse, ErrSchema, ErrRefusal,
// ErrTruncated, ErrNoAnswer), the path in the answer, the reason, the raw
// text.
//
// [Stream]'s partial values come from a tolerant parser that closes the
// JSON received so far (an open string ends where it was cut, open arrays
// and objects are closed, a member whose value has not arrived is left
// out); they are decoded, not validated.
//
// This package is above agent (it imports agent, llm and tool) and below
// the programs; it must never import serve, otelagent or an adapter.
package structured
