// Exercises agcore's OpenAI-compatible endpoints with OpenAI's official
// Node SDK and prints what it got as one JSON object. The Go tests start
// the server, run this script and check the result.
//
// Environment: AGCORE_OPENAI_NODE_DIR (where .ci/openai-node-setup.sh
// installed the SDK), AGCORE_BASE_URL (http://host:port/v1), AGCORE_TOKEN,
// AGCORE_MODEL, AGCORE_TOOLS ("1": the model's "add" turn runs a tool).
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.AGCORE_OPENAI_NODE_DIR, 'package.json'));
const { default: OpenAI } = require('openai');

const baseURL = process.env.AGCORE_BASE_URL;
const model = process.env.AGCORE_MODEL;
const client = new OpenAI({ baseURL, apiKey: process.env.AGCORE_TOKEN, maxRetries: 0 });
const out = {};

async function caught(fn) {
  try {
    await fn();
    return { ok: true };
  } catch (e) {
    return { status: e.status, code: e.code ?? e.error?.code ?? null, type: e.type ?? null, name: e.constructor.name };
  }
}

out.models = (await client.models.list()).data.map((m) => ({ id: m.id, object: m.object, owned_by: m.owned_by }));

const c = await client.chat.completions.create({ model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello' }] });
out.chat = { object: c.object, text: c.choices[0].message.content, finish: c.choices[0].finish_reason, total: c.usage.total_tokens };

{
  const stream = await client.chat.completions.create({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'streamed' }] });
  let text = '', finish = null, total = null, chunks = 0;
  for await (const ch of stream) {
    chunks++;
    if (ch.usage) total = ch.usage.total_tokens;
    for (const choice of ch.choices) {
      text += choice.delta.content ?? '';
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  out.chatStream = { text, finish, total, chunks };
}

{
  // The SDK's stream helper assembles the chunks itself.
  const runner = client.chat.completions.stream({ model, messages: [{ role: 'user', content: 'helper' }] });
  const final = await runner.finalChatCompletion();
  out.chatHelper = { text: final.choices[0].message.content, finish: final.choices[0].finish_reason };
}

const r1 = await client.responses.create({ model, input: 'one', instructions: 'Be brief.' });
const r2 = await client.responses.create({ model, input: [{ role: 'user', content: 'two' }], previous_response_id: r1.id });
out.responses = [
  { id: r1.id, status: r1.status, text: r1.output_text, total: r1.usage.total_tokens },
  { id: r2.id, status: r2.status, text: r2.output_text, previous: r2.previous_response_id },
];

{
  const stream = await client.responses.create({ model, input: 'three', previous_response_id: r2.id, stream: true });
  const types = [];
  let text = '', completed = null, lastSeq = -1, ordered = true;
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.sequence_number !== lastSeq + 1) ordered = false;
    lastSeq = ev.sequence_number;
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.completed') completed = ev.response;
  }
  out.responsesStream = { text, ordered, first: types[0], last: types[types.length - 1], id: completed?.id, outputText: completed?.output_text ?? null, total: completed?.usage?.total_tokens };
}

{
  const runner = client.responses.stream({ model, input: 'four', previous_response_id: out.responsesStream.id });
  const final = await runner.finalResponse();
  out.responsesHelper = { id: final.id, text: final.output_text, status: final.status };
}

out.retrieved = (await client.responses.retrieve(r1.id)).output_text;

if (process.env.AGCORE_TOOLS === '1') {
  const r = await client.responses.create({ model, input: 'add 2 and 3' });
  out.tools = { text: r.output_text, items: r.output.map((i) => `${i.type}:${i.status ?? ''}`) };
  const cc = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'add 2 and 3' }] });
  out.chatTools = { text: cc.choices[0].message.content, toolCalls: cc.choices[0].message.tool_calls ?? null, finish: cc.choices[0].finish_reason };
}

// An earlier response than the latest: the conversation branches there.
const branch = await client.responses.create({ model, input: 'branch', previous_response_id: r1.id });
out.branch = { id: branch.id, previous: branch.previous_response_id, text: branch.output_text };

out.errors = {
  unknownModel: await caught(() => client.chat.completions.create({ model: 'no-such-agent', messages: [{ role: 'user', content: 'x' }] })),
  badToken: await caught(() => new OpenAI({ baseURL, apiKey: 'wrong', maxRetries: 0 }).models.list()),
};

console.log(JSON.stringify(out));
